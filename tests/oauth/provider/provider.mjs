#!/usr/bin/env node
// A real OAuth 2.1 authorization server for the resource-server tests, built on
// oidc-provider (pinned in package.json). Test use only: accounts, login and
// consent are automated and everything lives in memory.
//
//   node provider.mjs --resource URL [--port N] [--other-resource URL]
//        [--opaque-resource URL] [--keys-out FILE] [--keys-in FILE]
//        [--deny-scopes "herdr.send"] [--delay-ms N]
//
// Listens on 127.0.0.1:--port (0 = any free port), or, when LISTEN_FDS=1 (and
// LISTEN_PID is absent or this process), on the inherited listening socket fd 3.
// Once listening it prints one JSON line on stdout:
//   {"issuer":"http://127.0.0.1:PORT","port":PORT}
//
// oidc-provider is pinned to 8.8.1, the newest release line that supports Node 20
// (9.x warns "Unsupported runtime" below Node 22).
//
// What it is configured to do:
// - Issuer `http://127.0.0.1:PORT` (no trailing slash); tokens carry exactly that `iss`.
// - Resource indicators (RFC 8707). --resource, --other-resource and --opaque-resource
//   are the only resources; each offers the scopes herdr.read and herdr.send. The first
//   two get JWT access tokens (RS256, header typ "at+jwt", aud = the resource URL,
//   scope = the granted scopes, client_id, sub, iss, iat, exp, jti); --opaque-resource
//   gets opaque tokens, for introspection (RFC 7662, at /token/introspection; a JWT
//   access token introspects as {"active":false}). A request naming no resource gets
//   --resource. A token request asking for no herdr scope (or only unknown ones) gets
//   a token without a `scope` claim. An unknown resource is refused (invalid_target).
// - Metadata: oidc-provider 8.x serves /.well-known/openid-configuration only; this
//   server also answers /.well-known/oauth-authorization-server (RFC 8414) with the
//   very same document (the issuer has no path, so both names apply to it).
//   herdr.read and herdr.send are listed in scopes_supported.
// - Dynamic client registration (RFC 7591) at /reg, open (no initial access token).
//   application_type "web" (oidc-provider's default) accepts any http(s) redirect URI
//   registered exactly (http://127.0.0.1:ANY/callback, http://localhost:3030/callback);
//   "native" (what the MCP Python SDK sends) accepts http loopback URIs and, per
//   RFC 8252, any port at authorization time.
// - Scope step-up: oidc-provider restricts a client that registered a `scope` to the
//   scopes in it. A client registering with `herdr.read` only must be able to ask for
//   herdr.send later, so every client's registered `scope` is widened to every scope
//   this server supports, "openid offline_access herdr.read herdr.send" (the
//   registration response shows the widened value): registration never limits scopes.
// - PKCE (S256) is required for every authorization code request.
// - Refresh tokens are issued when offline_access is requested by a client allowed
//   the refresh_token grant (oidc-provider's default policy).
// - Pre-registered confidential client `herdr-tests` / `herdr-tests-secret-0123456789abcdef`:
//   client_credentials, scope "herdr.read herdr.send", client_secret_basic or
//   client_secret_post (oidc-provider accepts either for a secret-based client), may
//   introspect.
// - Interactions: /interaction/:uid logs in account `test-user` and grants exactly the
//   requested scopes and resource, minus any --deny-scopes (which are recorded as
//   rejected, so the token simply lacks them; client_credentials is not affected).
//   No page is ever shown: the authorization URL answers with 303s until the
//   redirect to the client's redirect_uri with code, state and iss (RFC 9207).
// - Signing keys: one RSA 2048 (RS256) and one P-256 (ES256) key, generated at start
//   (or read with --keys-in), published at /jwks with their kids; --keys-out writes
//   them, private parts included, as
//   {"keys":[{"kid","alg","private_pem","public_pem"},...]} with mode 0600.
// - POST /__control {"delayMs": N} (or --delay-ms N) delays every later response by N
//   ms (the control endpoint itself answers at once). POST /__control {} answers
//   {"delayMs": N, "requests": {PATH: COUNT, ...}}: the requests received so far by
//   path (/token/introspection among them), counted before any delay.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';

import Provider, { errors } from 'oidc-provider';
import MemoryAdapter from 'oidc-provider/lib/adapters/memory_adapter.js';

// oidc-provider's own in-memory store, under another name: it warns on stderr when
// its default is used as is, and in-memory is exactly what a test server wants.
class InMemoryAdapter extends MemoryAdapter {}

const SCOPES = ['herdr.read', 'herdr.send'];
const ALL_SCOPES = ['openid', 'offline_access', ...SCOPES];
const ACCOUNT = 'test-user';
const TEST_CLIENT = {
  client_id: 'herdr-tests',
  client_secret: 'herdr-tests-secret-0123456789abcdef',
  grant_types: ['client_credentials'],
  response_types: [],
  redirect_uris: [],
  scope: SCOPES.join(' '),
  token_endpoint_auth_method: 'client_secret_basic',
};

function die(msg) {
  process.stderr.write(`provider: ${msg}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { port: 0, denyScopes: new Set(), delayMs: 0 };
  const takesValue = new Set([
    '--port', '--resource', '--other-resource', '--opaque-resource',
    '--keys-out', '--keys-in', '--deny-scopes', '--delay-ms',
  ]);
  for (let i = 0; i < argv.length; i += 1) {
    let flag = argv[i];
    let value;
    const eq = flag.indexOf('=');
    if (flag.startsWith('--') && eq !== -1) {
      value = flag.slice(eq + 1);
      flag = flag.slice(0, eq);
    }
    if (!takesValue.has(flag)) die(`unknown argument ${argv[i]}`);
    if (value === undefined) {
      i += 1;
      if (i >= argv.length) die(`${flag} needs a value`);
      value = argv[i];
    }
    switch (flag) {
      case '--port':
        opts.port = Number(value);
        if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) die(`bad --port ${value}`);
        break;
      case '--delay-ms':
        opts.delayMs = Number(value);
        if (!Number.isFinite(opts.delayMs) || opts.delayMs < 0) die(`bad --delay-ms ${value}`);
        break;
      case '--deny-scopes':
        for (const s of value.split(/[\s,]+/).filter(Boolean)) opts.denyScopes.add(s);
        break;
      case '--resource': opts.resource = value; break;
      case '--other-resource': opts.otherResource = value; break;
      case '--opaque-resource': opts.opaqueResource = value; break;
      case '--keys-out': opts.keysOut = value; break;
      case '--keys-in': opts.keysIn = value; break;
      default: break;
    }
  }
  if (!opts.resource) die('--resource URL is required');
  for (const r of [opts.resource, opts.otherResource, opts.opaqueResource]) {
    if (r !== undefined && !URL.canParse(r)) die(`not an absolute URL: ${r}`);
  }
  return opts;
}

// ------------------------------------------------------------------ keys ---
function keyEntry(kid, alg, privateKey) {
  return {
    kid,
    alg,
    private_pem: privateKey.export({ type: 'pkcs8', format: 'pem' }),
    public_pem: crypto.createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }),
  };
}

function generateKeys() {
  const tag = crypto.randomBytes(6).toString('hex');
  const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const ec = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  return [keyEntry(`rs256-${tag}`, 'RS256', rsa), keyEntry(`es256-${tag}`, 'ES256', ec)];
}

function loadKeys(file) {
  let parsed;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    die(`cannot read --keys-in ${file}: ${e.message}`);
  }
  if (!Array.isArray(parsed?.keys) || !parsed.keys.length) die(`--keys-in ${file}: no "keys" array`);
  return parsed.keys.map((k) => {
    if (typeof k.kid !== 'string' || typeof k.alg !== 'string' || typeof k.private_pem !== 'string') {
      die(`--keys-in ${file}: every key needs kid, alg and private_pem`);
    }
    return keyEntry(k.kid, k.alg, crypto.createPrivateKey(k.private_pem));
  });
}

function toJwk(entry) {
  const jwk = crypto.createPrivateKey(entry.private_pem).export({ format: 'jwk' });
  return { ...jwk, kid: entry.kid, alg: entry.alg, use: 'sig' };
}

// --------------------------------------------------------------- helpers ---
const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

function readBody(req, limit = 64 * 1024) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > limit) {
        reject(new Error('body too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

// ---------------------------------------------------------------- config ---
function buildConfiguration(opts, keys) {
  const resources = new Map([[opts.resource, 'jwt']]);
  if (opts.otherResource) resources.set(opts.otherResource, 'jwt');
  if (opts.opaqueResource) resources.set(opts.opaqueResource, 'opaque');

  return {
    adapter: InMemoryAdapter,
    clients: [TEST_CLIENT],
    jwks: { keys: keys.map(toJwk) },
    cookies: { keys: [crypto.randomBytes(32).toString('hex')] },
    scopes: ALL_SCOPES,
    responseTypes: ['code'],
    pkce: { methods: ['S256'], required: () => true },
    findAccount: async (_ctx, sub) => ({
      accountId: sub,
      async claims() { return { sub }; },
    }),
    // Clients register with the scope of the first challenge (herdr.read) and step up
    // to herdr.send later: every client's registered scope is widened to all of
    // ALL_SCOPES, so oidc-provider's per-client scope allow list never refuses a later
    // request. oidc-provider only runs this hook when at least one extra property is
    // declared; the property itself is unused.
    extraClientMetadata: {
      properties: ['herdr_unused'],
      validator(_ctx, key, _value, metadata) {
        if (key !== 'herdr_unused') return;
        const wanted = new Set(typeof metadata.scope === 'string' ? metadata.scope.split(' ').filter(Boolean) : []);
        for (const s of ALL_SCOPES) wanted.add(s);
        metadata.scope = [...wanted].join(' ');
      },
    },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true, initialAccessToken: false },
      clientCredentials: { enabled: true },
      revocation: { enabled: true },
      introspection: {
        enabled: true,
        // Confidential clients (herdr-tests among them) may introspect any token.
        allowedPolicy: async (_ctx, client) => client.clientAuthMethod !== 'none',
      },
      resourceIndicators: {
        enabled: true,
        // No resource named: the main one. Several: let oidc-provider refuse.
        defaultResource: async (_ctx, _client, oneOf) => oneOf ?? opts.resource,
        // A token request may omit the resource granted at authorization.
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, indicator) => {
          const format = resources.get(indicator);
          if (!format) throw new errors.InvalidTarget(`unknown resource ${indicator}`);
          const info = {
            scope: SCOPES.join(' '),
            audience: indicator,
            accessTokenTTL: 3600,
            accessTokenFormat: format,
          };
          if (format === 'jwt') info.jwt = { sign: { alg: 'RS256' } };
          return info;
        },
      },
    },
    ttl: {
      AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL || 3600,
      AuthorizationCode: 120,
      ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL || 3600,
      Grant: 3600,
      IdToken: 3600,
      Interaction: 600,
      RefreshToken: 86400,
      Session: 3600,
    },
  };
}

// --------------------------------------------------------- interactions ---
function splitDenied(scopes, deny) {
  const list = Array.isArray(scopes) ? scopes : String(scopes || '').split(' ').filter(Boolean);
  return [list.filter((s) => !deny.has(s)), list.filter((s) => deny.has(s))];
}

async function interaction(provider, opts, req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params, session } = details;
  if (prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: ACCOUNT } }, { mergeWithLastSubmission: false });
    return;
  }
  if (prompt.name === 'consent') {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = prompt.details;
    if (missingOIDCScope) {
      const [ok, denied] = splitDenied(missingOIDCScope, opts.denyScopes);
      if (ok.length) grant.addOIDCScope(ok.join(' '));
      if (denied.length) grant.rejectOIDCScope(denied.join(' '));
    }
    if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims);
    if (missingResourceScopes) {
      for (const [indicator, scopes] of Object.entries(missingResourceScopes)) {
        const [ok, denied] = splitDenied(scopes, opts.denyScopes);
        if (ok.length) grant.addResourceScope(indicator, ok.join(' '));
        if (denied.length) grant.rejectResourceScope(indicator, denied.join(' '));
      }
    }
    const grantId = await grant.save();
    const consent = details.grantId ? {} : { grantId };
    await provider.interactionFinished(req, res, { consent }, { mergeWithLastSubmission: true });
    return;
  }
  sendJson(res, 500, { error: 'server_error', error_description: `unexpected prompt ${prompt.name}` });
}

// ------------------------------------------------------------------ main ---
async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const keys = opts.keysIn ? loadKeys(opts.keysIn) : generateKeys();
  if (opts.keysOut) {
    fs.writeFileSync(opts.keysOut, `${JSON.stringify({ keys }, null, 2)}\n`, { mode: 0o600 });
    fs.chmodSync(opts.keysOut, 0o600);
  }

  let delayMs = opts.delayMs;
  // Requests answered (or being answered) so far, by path.
  const requests = {};
  let handler; // set once the provider exists (its issuer needs the bound port)
  let markReady;
  const ready = new Promise((resolve) => { markReady = resolve; });

  const server = http.createServer(async (req, res) => {
    try {
      await ready;
      const path = (req.url || '/').split('?')[0];
      if (path === '/__control') {
        if (req.method !== 'POST') {
          sendJson(res, 405, { error: 'method not allowed' });
          return;
        }
        const body = JSON.parse((await readBody(req)) || '{}');
        if (body.delayMs !== undefined) {
          const n = Number(body.delayMs);
          if (!Number.isFinite(n) || n < 0) {
            sendJson(res, 400, { error: 'delayMs must be a non-negative number' });
            return;
          }
          delayMs = n;
        }
        sendJson(res, 200, { delayMs, requests });
        return;
      }
      requests[path] = (requests[path] || 0) + 1;
      if (delayMs > 0) await sleep(delayMs);
      await handler(req, res, path);
    } catch (err) {
      process.stderr.write(`provider: ${req.method} ${req.url}: ${err?.stack || err}\n`);
      if (!res.headersSent) sendJson(res, 500, { error: 'server_error', error_description: String(err?.message || err) });
      else res.destroy();
    }
  });
  server.keepAliveTimeout = 5000;

  const pid = process.env.LISTEN_PID;
  const inherited = process.env.LISTEN_FDS === '1' && (pid === undefined || pid === '' || Number(pid) === process.pid);
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    if (inherited) server.listen({ fd: 3 }, resolve);
    else server.listen(opts.port, '127.0.0.1', resolve);
  });
  server.on('error', (err) => process.stderr.write(`provider: server error: ${err.stack || err}\n`));
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;

  const provider = new Provider(issuer, buildConfiguration(opts, keys));
  provider.on('server_error', (_ctx, err) => process.stderr.write(`provider: server_error: ${err?.stack || err}\n`));
  const callback = provider.callback();
  handler = async (req, res, path) => {
    if (path === '/.well-known/oauth-authorization-server') {
      const q = req.url.indexOf('?');
      req.url = `/.well-known/openid-configuration${q === -1 ? '' : req.url.slice(q)}`;
    }
    if (/^\/interaction\/[^/]+$/.test(path) && req.method === 'GET') {
      await interaction(provider, opts, req, res);
      return;
    }
    callback(req, res);
  };
  markReady();

  process.stdout.write(`${JSON.stringify({ issuer, port })}\n`);
}

for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));

main().catch((err) => {
  process.stderr.write(`provider: ${err?.stack || err}\n`);
  process.exit(1);
});
