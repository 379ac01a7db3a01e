#!/usr/bin/env python3
"""A client of the terminal resources and their subscriptions, built on the
official MCP Python SDK (`mcp`, the version scripts/interop.sh pins).

    resources_client.py --adapter BIN --config FILE | --url URL   --era legacy|current
                        [--address t1] [--settle-secs 2.5]

Lists the resources and the templates, reads one terminal, subscribes to it
(`resources/subscribe` in the legacy era, `subscriptions/listen` in 2026-07-28),
prompts the terminal with send_prompt (the agent then works, and reports done),
collects the updates until the agent is done and --settle-secs more have passed,
reading the resource at each; then unsubscribes (or leaves the listen), prompts it
again and counts what still arrives for --settle-secs. Prints one JSON line:
  {"protocol": ..., "resources": [uri, ...], "templates": [uriTemplate, ...],
   "read": <the resource's JSON>, "mime": "...",
   "updates": [{"uri": ..., "status": ..., "status_seq": ...}, ...],
   "after_unsubscribe": N}
Exit 0 when it ran (the caller judges the JSON); 1 with a message otherwise.
"""

import argparse
import asyncio
import json
import os
import sys
from typing import Any

import mcp.types as types
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
    p.add_argument("--era", choices=["legacy", "current"], default="current")
    p.add_argument("--address", default="t1")
    p.add_argument("--settle-secs", type=float, default=2.5)
    return p.parse_args()


async def main(args: argparse.Namespace) -> None:
    updates: asyncio.Queue[str] = asyncio.Queue()

    async def on_message(message: Any) -> None:
        root = getattr(message, "root", message)
        if isinstance(root, types.ResourceUpdatedNotification):
            await updates.put(root.params.uri)

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
    mode = "legacy" if args.era == "legacy" else "auto"
    try:
        await session(args, server, mode, on_message, updates)
    finally:
        if http_client is not None:
            await http_client.aclose()


async def session(args: argparse.Namespace, server: Any, mode: str, on_message: Any, updates: Any) -> None:
    async with Client(server, mode=mode, read_timeout_seconds=30, message_handler=on_message) as client:
        out: dict[str, Any] = {"protocol": client.protocol_version}
        listed = await client.list_resources()
        out["resources"] = [str(r.uri) for r in listed.resources]
        templates = await client.list_resource_templates()
        out["templates"] = [t.uri_template for t in templates.resource_templates]
        uri = next(u for u in out["resources"] if u.endswith("/" + args.address))

        async def read() -> dict[str, Any]:
            result = await client.read_resource(uri)
            contents = result.contents[0]
            out["mime"] = contents.mime_type
            return json.loads(contents.text)

        out["read"] = await read()
        seen: list[dict[str, Any]] = []

        async def collect(events: Any) -> None:
            # Until the agent is done, then settle-secs more.
            done_at = None
            while True:
                timeout = 15.0 if done_at is None else max(0.0, done_at + args.settle_secs - asyncio.get_running_loop().time())
                try:
                    got = await asyncio.wait_for(events(), timeout)
                except asyncio.TimeoutError:
                    return
                record = await read()
                seen.append({"uri": got, "status": record["status"], "status_seq": record["status_seq"]})
                if record["status"] == "done" and done_at is None:
                    done_at = asyncio.get_running_loop().time()

        prompt = {"address": args.address, "text": f"a task for the {args.era} era"}
        if args.era == "legacy":
            await client.session.subscribe_resource(uri)
            await client.call_tool("send_prompt", prompt)
            await collect(updates.get)
            await client.session.unsubscribe_resource(uri)
        else:
            async with client.listen(resource_subscriptions=[uri]) as sub:
                events = sub.__aiter__()

                async def next_event() -> str:
                    event = await events.__anext__()
                    return str(getattr(event, "uri", event))

                await client.call_tool("send_prompt", prompt)
                await collect(next_event)
        out["updates"] = seen
        while not updates.empty():
            updates.get_nowait()
        await client.call_tool("send_prompt", {**prompt, "text": "unwatched follow-up"})
        await asyncio.sleep(args.settle_secs)
        out["after_unsubscribe"] = updates.qsize()
        print(json.dumps(out, default=str))


if __name__ == "__main__":
    try:
        asyncio.run(main(parse()))
    except Exception as e:
        print(f"resources_client: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
