#!/usr/bin/env python3
"""A coordinator's send that follows its turn, on the official MCP Python SDK
(`mcp`, the version scripts/interop.sh pins), over stdio.

    follow_client.py --adapter BIN --config FILE [--address t1]

Calls send_prompt once with follow_ms and prints its structured answer as one
JSON line. Exit 0 when it ran (the caller judges the JSON); 1 otherwise.
"""

import argparse
import asyncio
import json
import sys

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from server_env import server_environment


async def main(args: argparse.Namespace) -> None:
    server = StdioServerParameters(
        command=args.adapter,
        args=["serve", "--config", args.config],
        env=server_environment(),
    )
    async with Client(server, read_timeout_seconds=60) as client:
        result = await client.call_tool(
            "send_prompt",
            {"address": args.address, "text": "a task to follow", "follow_ms": 30000},
        )
        print(json.dumps({"is_error": bool(result.is_error), "answer": result.structured_content}))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--adapter", required=True)
    parser.add_argument("--config", required=True)
    parser.add_argument("--address", default="t1")
    try:
        asyncio.run(main(parser.parse_args()))
    except Exception as e:
        print(f"follow_client: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
