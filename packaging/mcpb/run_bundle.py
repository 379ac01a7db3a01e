#!/usr/bin/env python3
"""Runs an unpacked MCP Bundle's server once, as a desktop host would, with
the official MCP Python SDK (`mcp`, the version scripts/interop.sh pins).

    run_bundle.py BUNDLE_DIR CONFIG

Reads BUNDLE_DIR/manifest.json, fills in its `mcp_config` the way hosts do
(`${__dirname}` is the bundle's folder, `${user_config.config_file}` the
config file the user picked: CONFIG), starts that command over stdio, lists
its tools and prompts and calls list_sessions. Prints one JSON line:
  {"command": [...], "tools": [...], "prompts": [...], "sessions": <answer>}
Exit 0 when it ran (the caller judges the JSON); 1 with a message otherwise.
"""

import asyncio
import json
import os
import sys
from typing import Any

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters


def filled(value: str, bundle: str, config: str) -> str:
    return value.replace("${__dirname}", bundle).replace("${user_config.config_file}", config)


async def main(bundle: str, config: str) -> None:
    with open(os.path.join(bundle, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    mcp_config = manifest["server"]["mcp_config"]
    command = filled(mcp_config["command"], bundle, config)
    args = [filled(a, bundle, config) for a in mcp_config.get("args", [])]
    server = StdioServerParameters(command=command, args=args, env={"RUST_LOG": "warn"})
    async with Client(server, read_timeout_seconds=30) as client:
        tools = await client.list_tools()
        prompts = await client.list_prompts()
        sessions = await client.call_tool("list_sessions", {})
        if sessions.is_error:
            raise RuntimeError(f"list_sessions failed: {sessions.content[0].text}")
        print(
            json.dumps(
                {
                    "command": [command, *args],
                    "tools": [t.name for t in tools.tools],
                    "prompts": [p.name for p in prompts.prompts],
                    "sessions": sessions.structured_content,
                }
            )
        )


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    try:
        asyncio.run(main(os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])))
    except Exception as e:  # noqa: BLE001 - one line for the caller
        print(f"run_bundle.py: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
