#!/usr/bin/env node
// Runs the prebuilt herdr-core-mcp of this platform's package (an optional
// dependency: npm installs only the one whose os and cpu match) with the
// same arguments and stdio, and exits as it exits. It never writes to
// stdout: over stdio that is the MCP host's channel, and only the server
// speaks on it. Signals sent to this process go on to the server.
"use strict";

const { spawn } = require("node:child_process");
const { constants } = require("node:os");
const path = require("node:path");

const PACKAGES = {
  "linux-x64": "@herdr-core-mcp/linux-x64",
  "linux-arm64": "@herdr-core-mcp/linux-arm64",
};
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];

function fail(problem) {
  process.stderr.write(
    `herdr-core-mcp: ${problem}\n` +
      `herdr-core-mcp: prebuilt binaries exist for ${Object.keys(PACKAGES).join(" and ")}; ` +
      "elsewhere build it from source with Rust 1.88 or newer: " +
      "cargo install --locked herdr-core-mcp " +
      "(or see https://github.com/herdr-core-mcp/herdr-core-mcp#readme)\n",
  );
  process.exit(1);
}

function binary() {
  const platform = `${process.platform}-${process.arch}`;
  const name = PACKAGES[platform];
  if (!name) fail(`no prebuilt binary for ${platform}`);
  try {
    return path.join(path.dirname(require.resolve(`${name}/package.json`)), "bin", "herdr-core-mcp");
  } catch {
    return fail(`${name}, the binary for ${platform}, is not installed (optional dependencies left out?)`);
  }
}

const file = binary();
const child = spawn(file, process.argv.slice(2), { stdio: "inherit" });
const forward = (signal) => child.kill(signal);
for (const signal of SIGNALS) process.on(signal, forward);
child.on("error", (error) => fail(`cannot run ${file}: ${error.message}`));
child.on("exit", (code, signal) => {
  if (signal === null) process.exit(code);
  // Die of the same signal, as the server did, so the caller sees it.
  for (const s of SIGNALS) process.removeListener(s, forward);
  process.kill(process.pid, signal);
  process.exit(128 + (constants.signals[signal] ?? 0));
});
