#!/usr/bin/env python3
"""A coordinator's `since` loop, built on the official MCP Python SDK (`mcp`,
the version scripts/interop.sh pins).

    fleet_client.py --adapter BIN --config FILE | --url URL   [--address t1]

Waits once on the fleet (nothing happens: it times out and answers a since),
prompts the terminal with send_prompt and waits on that terminal alone until it
is done, so the change happens between two fleet waits; then waits on the fleet
with the first since (the change must come back at once), and once more with the
since of that answer (nothing happened: it must time out with no change). Then
passes an edited since, and the since of the terminal's resource. Prints one
JSON line:
  {"first": <answer>, "second": <answer>, "third": <answer>,
   "edited": {"is_error": bool, "text": "..."}, "resource_scope": "...",
   "resource_wait": <answer>}
Exit 0 when it ran (the caller judges the JSON); 1 with a message otherwise.
"""

import argparse
import asyncio
import json
import os
import sys
from typing import Any

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from server_env import server_environment


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--adapter")
    p.add_argument("--config")
    p.add_argument("--url", help="over HTTP (HERDR_MCP_TOKEN in the environment) instead of stdio")
    p.add_argument("--address", default="t1")
    return p.parse_args()


async def main(args: argparse.Namespace) -> None:
    http_client = None
    if args.url:
        http_client = create_mcp_http_client(headers={"Authorization": f"Bearer {os.environ['HERDR_MCP_TOKEN']}"})
        server: Any = streamable_http_client(args.url, http_client=http_client)
    else:
        server = StdioServerParameters(
            command=args.adapter,
            args=["serve", "--config", args.config],
            env=server_environment(),
        )
    try:
        await session(args, server)
    finally:
        if http_client is not None:
            await http_client.aclose()


async def session(args: argparse.Namespace, server: Any) -> None:
    async with Client(server, read_timeout_seconds=60) as client:

        async def tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            result = await client.call_tool(name, arguments)
            if result.is_error:
                raise RuntimeError(f"{name} failed: {result.content[0].text}")
            return result.structured_content

        out: dict[str, Any] = {}
        out["first"] = await tool("wait_for_status", {"timeout_ms": 300})
        sent = await tool("send_prompt", {"address": args.address, "text": "a task between two waits"})
        if sent["outcome"] != "sent":
            raise RuntimeError(f"send_prompt: {sent}")
        await tool(
            "wait_for_status",
            {
                "targets": [{"address": args.address, "after_seq": sent["core_status_seq"]}],
                "until": ["done"],
                "timeout_ms": 20000,
            },
        )
        out["second"] = await tool("wait_for_status", {"since": out["first"]["since"], "timeout_ms": 20000})
        out["third"] = await tool("wait_for_status", {"since": out["second"]["since"], "timeout_ms": 400})
        edited = await client.call_tool("wait_for_status", {"since": out["first"]["since"][:-4], "timeout_ms": 200})
        out["edited"] = {"is_error": bool(edited.is_error), "text": edited.content[0].text}
        read = await client.read_resource(f"herdr-core://terminal/{args.address}")
        resource = json.loads(read.contents[0].text)
        waited = await tool("wait_for_status", {"since": resource["since"], "timeout_ms": 300})
        out["resource_scope"] = waited["scope"]
        out["resource_wait"] = waited
        print(json.dumps(out, default=str))


if __name__ == "__main__":
    try:
        asyncio.run(main(parse()))
    except Exception as e:
        print(f"fleet_client: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
