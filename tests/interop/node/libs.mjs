// Loads the pinned SDKs for ../client.mjs. It lives here so that bare
// specifiers resolve from this folder's node_modules (installed by `npm ci`).
import { readFileSync } from 'node:fs';

const version = (name) =>
  JSON.parse(readFileSync(new URL(`./node_modules/${name}/package.json`, import.meta.url), 'utf8')).version;

// @modelcontextprotocol/sdk: the 1.x line (npm `latest`).
export async function loadSdk() {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport, getDefaultEnvironment } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const { LATEST_PROTOCOL_VERSION } = await import('@modelcontextprotocol/sdk/types.js');
  return {
    pkg: '@modelcontextprotocol/sdk',
    version: version('@modelcontextprotocol/sdk'),
    Client,
    StdioClientTransport,
    getDefaultEnvironment,
    StreamableHTTPClientTransport,
    latest: LATEST_PROTOCOL_VERSION,
  };
}

// @modelcontextprotocol/client: the 2.x split client package of the same SDK.
export async function loadClient() {
  const mod = await import('@modelcontextprotocol/client');
  const stdio = await import('@modelcontextprotocol/client/stdio');
  return {
    pkg: '@modelcontextprotocol/client',
    version: version('@modelcontextprotocol/client'),
    Client: mod.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    getDefaultEnvironment: stdio.getDefaultEnvironment,
    StreamableHTTPClientTransport: mod.StreamableHTTPClientTransport,
    latest: mod.LATEST_PROTOCOL_VERSION,
  };
}
