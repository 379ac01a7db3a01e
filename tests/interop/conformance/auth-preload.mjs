// Loaded with `node --import` by scripts/interop.sh. Adds `Authorization: Bearer $MCP_BEARER_TOKEN` to every HTTP request made
// through undici (the conformance runner's own `undici.request`) and Node's
// global fetch (the MCP SDK client), by installing a global dispatcher.
import { createRequire } from 'node:module';
const require = createRequire(process.env.CONFORMANCE_DIR + '/node_modules/@modelcontextprotocol/conformance/package.json');
const { Agent, setGlobalDispatcher } = require('undici');
const token = process.env.MCP_BEARER_TOKEN;
if (!token) throw new Error('MCP_BEARER_TOKEN is not set');
const auth = `Bearer ${token}`;
function withAuth(headers) {
  if (headers == null) return { authorization: auth };
  if (Array.isArray(headers)) {
    // flat [k, v, k, v] or [[k, v], ...]
    if (headers.length && Array.isArray(headers[0])) return [...headers.filter(([k]) => String(k).toLowerCase() !== 'authorization'), ['authorization', auth]];
    const out = [];
    for (let i = 0; i < headers.length; i += 2) if (String(headers[i]).toLowerCase() !== 'authorization') out.push(headers[i], headers[i + 1]);
    out.push('authorization', auth);
    return out;
  }
  if (typeof headers[Symbol.iterator] === 'function') return withAuth([...headers]);
  const out = {};
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() !== 'authorization') out[k] = v;
  out.authorization = auth;
  return out;
}
setGlobalDispatcher(new Agent().compose((dispatch) => (opts, handler) => dispatch({ ...opts, headers: withAuth(opts.headers) }, handler)));
