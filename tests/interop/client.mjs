#!/usr/bin/env node
// One full herdr-core-mcp session through an official MCP TypeScript SDK.
//
// Run by scripts/interop.sh against a fresh hc-sim whose terminal t1 (an
// agent) is the only approved one. Prints one `PASS` line per check; exits 1
// with a `FAIL` line on the first mismatch, 3 when the chosen SDK cannot speak
// the requested era (nothing was run).
//
//   node client.mjs --lib sdk|client --transport stdio --adapter BIN --config FILE [--era legacy|current]
//   node client.mjs --lib sdk|client --transport http --url http://127.0.0.1:PORT/mcp [--era ...]
//     (bearer token from the environment variable HERDR_MCP_TOKEN)
//
// --lib sdk     @modelcontextprotocol/sdk (the 1.x line, npm `latest`): only
//               the `initialize` handshake; it always offers 2025-11-25, its
//               LATEST_PROTOCOL_VERSION. No 2026-07-28 support.
// --lib client  @modelcontextprotocol/client (the 2.x split package of the
//               same SDK): `versionNegotiation.mode` 'legacy' (initialize,
//               offering 2025-11-25; its default) or 'auto' (probes
//               server/discover with 2026-07-28, falls back to initialize),
//               used for --era current and then required to land on 2026-07-28.
//
// The packages are loaded through node/libs.mjs, so they resolve from
// tests/interop/node/node_modules whatever the working directory.

import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { loadClient, loadSdk } from './node/libs.mjs';

const EXPECTED_INPUTS = {
  list_sessions: ['include_finished', 'limit', 'cursor'],
  read_output: ['address', 'created_ms', 'max_chars'],
  send_prompt: ['address', 'text', 'created_ms'],
  wait_for_output: ['address', 'created_ms', 'pattern', 'quiet_ms', 'timeout_ms', 'max_chars'],
};
const READ_ONLY = { list_sessions: true, read_output: true, send_prompt: false, wait_for_output: true };
const LEGACY_VERSIONS = new Set(['2025-06-18', '2025-11-25']);
const MODERN_VERSION = '2026-07-28';
const REPLY_TIMEOUT_MS = 30_000;

let TAG = 'ts';

class Mismatch extends Error {}

function ok(what) {
  console.log(`PASS [${TAG}] ${what}`);
}

function check(cond, what, detail) {
  if (!cond) {
    const extra = detail === undefined ? '' : `: ${typeof detail === 'string' ? detail : JSON.stringify(detail).slice(0, 2000)}`;
    throw new Mismatch(`${what}${extra}`);
  }
  ok(what);
}

async function load(lib) {
  if (lib === 'sdk') return { ...(await loadSdk()), eras: ['legacy'] };
  return { ...(await loadClient()), eras: ['legacy', 'current'] };
}

async function call(client, tool, args, expectError = false) {
  const result = await client.callTool({ name: tool, arguments: args });
  const sc = result.structuredContent;
  if (sc === null || typeof sc !== 'object' || Array.isArray(sc)) {
    throw new Mismatch(`${tool}: no structuredContent object in the result: ${JSON.stringify(result).slice(0, 2000)}`);
  }
  if (Boolean(result.isError) !== expectError) {
    throw new Mismatch(`${tool}(${JSON.stringify(args)}): isError=${result.isError}, expected ${expectError}: ${JSON.stringify(sc).slice(0, 2000)}`);
  }
  if (!Array.isArray(result.content) || !result.content.some((c) => c.type === 'text')) {
    throw new Mismatch(`${tool}: result has no text content block`);
  }
  return sc;
}

// Records the protocolVersion of the initialize result passing through a 1.x transport.
function sniffInitialize(transport, seen) {
  let handler;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    enumerable: true,
    get: () => handler,
    set: (h) => {
      handler = h && ((msg, extra) => {
        if (typeof msg?.result?.protocolVersion === 'string' && seen.protocolVersion === undefined) {
          seen.protocolVersion = msg.result.protocolVersion;
        }
        return h(msg, extra);
      });
    },
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function runChecks(client, opts) {
  // The 1.x Client keeps no negotiated version: it is sniffed from the initialize result.
  const negotiated = client.getNegotiatedProtocolVersion?.() ?? opts.sniffed.protocolVersion;
  if (opts.era === 'legacy') {
    check(LEGACY_VERSIONS.has(negotiated), `initialize handshake negotiated ${negotiated}`);
  } else {
    check(negotiated === MODERN_VERSION, `server/discover negotiated ${negotiated} (era ${client.getProtocolEra?.()})`);
  }
  const info = client.getServerVersion();
  if (opts.era === 'legacy' || info?.name !== undefined) {
    check(info?.name === 'herdr-core-mcp', `server identifies as ${JSON.stringify(info?.name)}`);
  }

  // --- tools/list (every page) ---
  const tools = {};
  let cursor;
  for (let i = 0; i < 20; i++) {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    for (const t of page.tools) tools[t.name] = t;
    cursor = page.nextCursor;
    if (!cursor) break;
  }
  const names = Object.keys(tools).sort();
  check(Object.keys(EXPECTED_INPUTS).every((n) => n in tools), `tools/list has ${JSON.stringify(Object.keys(EXPECTED_INPUTS))} (all: ${JSON.stringify(names)})`);
  for (const [name, props] of Object.entries(EXPECTED_INPUTS)) {
    const t = tools[name];
    const have = Object.keys(t.inputSchema?.properties ?? {});
    check(props.every((p) => have.includes(p)), `${name} inputSchema properties ${JSON.stringify(props)}`, have);
    check(t.outputSchema && t.outputSchema.type === 'object', `${name} has an object outputSchema`, t.outputSchema ?? 'missing');
    const ro = t.annotations?.readOnlyHint;
    check(ro === READ_ONLY[name], `${name} readOnlyHint is ${READ_ONLY[name]}`, `got ${JSON.stringify(ro)}`);
  }

  // --- list_sessions ---
  const listing = await call(client, 'list_sessions', { limit: 100 });
  const sessions = listing.sessions;
  check(Array.isArray(sessions) && typeof listing.core_id === 'string' && 'next_cursor' in listing,
    `list_sessions returned ${sessions?.length} sessions of core ${listing.core_id}`, listing);
  const approved = sessions.filter((s) => s.send_approved === true);
  check(approved.length === 1 && approved[0].address === 't1', 'exactly one approved session, t1',
    sessions.map((s) => [s.address, s.send_approved]));
  const agent = approved[0];
  check(agent.status === 'idle', 'approved agent t1 is idle', agent);
  const unapproved = sessions.filter((s) => s.send_approved === false && s.finished_ms === null);
  const shells = unapproved.filter((s) => s.program === 'sh');
  const other = (shells.length ? shells : unapproved)[0];
  check(other !== undefined, `an unapproved live terminal exists (${other?.address})`, sessions);

  // --- read_output ---
  const screen = await call(client, 'read_output', { address: agent.address, created_ms: agent.created_ms });
  check(screen.address === agent.address && screen.created_ms === agent.created_ms && typeof screen.text === 'string'
    && Number.isInteger(screen.total_chars) && ['idle', 'working', 'done', 'blocked', 'error', 'unknown'].includes(screen.status),
  `read_output t1: status ${screen.status}, ${screen.total_chars} chars`, screen);

  // --- send_prompt to the approved agent ---
  const prompt = `interop ${opts.transport} ${opts.era} ${randomBytes(4).toString('hex')}`;
  const sent = await call(client, 'send_prompt', { address: agent.address, text: prompt, created_ms: agent.created_ms });
  check(sent.outcome === 'sent' && sent.address === agent.address && sent.chars === prompt.length,
    `send_prompt to t1: outcome sent (${sent.reason_code})`, sent);

  // --- wait_for_output until the agent's reply is on screen ---
  const want = `reply: ${prompt}`;
  const escaped = want.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const waited = await call(client, 'wait_for_output', {
    address: agent.address, created_ms: agent.created_ms, pattern: `^${escaped}$`, timeout_ms: 30000,
  });
  check(waited.outcome === 'matched' && waited.match?.line === want,
    `wait_for_output t1 matched ${JSON.stringify(want)}`, waited);

  // --- then read_output until the agent reports done ---
  const deadline = Date.now() + REPLY_TIMEOUT_MS;
  let last = {};
  while (Date.now() < deadline) {
    last = await call(client, 'read_output', { address: agent.address, created_ms: agent.created_ms });
    if (last.text?.includes(want) && last.status === 'done') break;
    await sleep(200);
  }
  check(last.text?.includes(want) && last.status === 'done', `read_output t1 shows ${JSON.stringify(want)} with status done`, last);

  // --- refused send to an unapproved terminal ---
  const refused = await call(client, 'send_prompt', { address: other.address, text: 'echo must-not-run' }, true);
  check(refused.outcome === 'not_sent' && refused.reason_code === 'not_approved',
    `send_prompt to unapproved ${other.address}: not_sent/not_approved with isError`, refused);
}

async function main() {
  const { values: opts } = parseArgs({
    options: {
      lib: { type: 'string', default: 'sdk' },
      transport: { type: 'string' },
      era: { type: 'string', default: 'legacy' },
      adapter: { type: 'string' },
      config: { type: 'string' },
      url: { type: 'string' },
    },
    strict: true,
  });
  const usage = (msg) => {
    console.error(`client.mjs: ${msg}`);
    process.exit(2);
  };
  if (!['sdk', 'client'].includes(opts.lib)) usage('--lib must be sdk or client');
  if (!['stdio', 'http'].includes(opts.transport)) usage('--transport must be stdio or http');
  if (!['legacy', 'current'].includes(opts.era)) usage('--era must be legacy or current');
  if (opts.transport === 'stdio' && !(opts.adapter && opts.config)) usage('--transport stdio needs --adapter and --config');
  if (opts.transport === 'http' && !opts.url) usage('--transport http needs --url');

  const lib = await load(opts.lib);
  TAG = `${lib.pkg} ${lib.version} ${opts.transport} ${opts.era}`;
  if (!lib.eras.includes(opts.era)) {
    console.log(`UNSUPPORTED [${TAG}] this SDK has no ${opts.era} era (its newest revision is ${lib.latest}, reached only through initialize)`);
    process.exit(3);
  }

  let transport;
  if (opts.transport === 'stdio') {
    transport = new lib.StdioClientTransport({
      command: opts.adapter,
      args: ['serve', '--config', opts.config],
      env: { ...lib.getDefaultEnvironment(), RUST_LOG: process.env.RUST_LOG ?? 'warn' },
      stderr: 'inherit',
    });
  } else {
    const token = process.env.HERDR_MCP_TOKEN;
    if (!token) throw new Mismatch('HERDR_MCP_TOKEN is not set');
    transport = new lib.StreamableHTTPClientTransport(new URL(opts.url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
  }
  opts.sniffed = {};
  if (opts.lib === 'sdk') sniffInitialize(transport, opts.sniffed);
  const clientOptions = opts.lib === 'client'
    ? { versionNegotiation: { mode: opts.era === 'current' ? 'auto' : 'legacy' } }
    : {};
  const client = new lib.Client({ name: 'herdr-interop', version: '1.0.0' }, clientOptions);
  try {
    await client.connect(transport);
    await runChecks(client, opts);
  } finally {
    await client.close().catch(() => {});
  }
  console.log(`OK [${TAG}] full session passed`);
}

main().then(
  () => process.exit(0),
  (e) => {
    const msg = e instanceof Mismatch ? e.message : `${e?.name ?? 'Error'}: ${e?.message ?? e}${e?.code !== undefined ? ` (code ${e.code})` : ''}`;
    console.log(`FAIL [${TAG}] ${msg}`);
    process.exit(1);
  },
);
