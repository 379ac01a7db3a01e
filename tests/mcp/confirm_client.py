#!/usr/bin/env python3
"""A client of confirmed sends, built on the official MCP Python SDK (`mcp`, the
version scripts/interop.sh pins, from .interop/venv).

    confirm_client.py --transport stdio --adapter BIN --config FILE
                      | --transport http --url URL  (HERDR_MCP_TOKEN in the environment)
                      --era legacy|current --answer ANSWER --address t1 --text "..."
                      [--scenario send|tamper]

The SDK's elicitation callback stands in for the human: over a legacy session it
answers `elicitation/create`; in the 2026-07-28 era the SDK's own input-required
driver hands it the embedded request and retries with its answer.

ANSWER: accept (confirm: true), unconfirmed (accept with confirm: false), decline,
cancel, slow (accept after --slow-secs, past the server's confirmTimeoutMs), none
(no callback: the client declares no elicitation capability).

Scenario `send` prints one JSON line:
  {"protocol": "<negotiated>", "asked": ["<message shown>", ...],
   "result": <structuredContent>, "isError": bool, "elapsed_ms": <the call, round trips included>,
   "progress": ["<message of each progress notification the call received>", ...]}
The call asks for progress (a progress token) and records what arrives.
Scenario `tamper` (current era) drives the rounds by hand and prints
  {"protocol": ..., "first": "<input_required|complete>", "forged": <structuredContent>,
   "other_text": <structuredContent>, "accepted": <structuredContent>,
   "replayed": <structuredContent>}
Exit 0 when the scenario ran (the caller judges the JSON); 1 with a message otherwise.
"""

import argparse
import asyncio
import json
import os
import sys
import time
from typing import Any

import mcp.types as types
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from server_env import server_environment


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--transport", choices=["stdio", "http"], required=True)
    p.add_argument("--adapter")
    p.add_argument("--config")
    p.add_argument("--url")
    p.add_argument("--era", choices=["legacy", "current"], default="current")
    p.add_argument("--answer", choices=["accept", "unconfirmed", "decline", "cancel", "slow", "none"], default="accept")
    p.add_argument("--scenario", choices=["send", "tamper"], default="send")
    p.add_argument("--address", default="t1")
    p.add_argument("--text", required=True)
    p.add_argument("--slow-secs", type=float, default=2.5)
    return p.parse_args()


def structured(result: Any) -> Any:
    if isinstance(result, types.InputRequiredResult):
        return {"input_required": True}
    return result.structured_content if result.structured_content is not None else [
        getattr(c, "text", None) for c in result.content
    ]


async def main(args: argparse.Namespace) -> None:
    asked: list[str] = []
    progress: list[str] = []

    async def on_progress(_done: float, _total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async def answer(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        if args.answer == "slow":
            await asyncio.sleep(args.slow_secs)
        if args.answer in ("accept", "slow"):
            return types.ElicitResult(action="accept", content={"confirm": True})
        if args.answer == "unconfirmed":
            return types.ElicitResult(action="accept", content={"confirm": False})
        return types.ElicitResult(action=args.answer)

    callback = None if args.answer == "none" else answer
    mode = "legacy" if args.era == "legacy" else "auto"
    http_client = None
    if args.transport == "stdio":
        server: Any = StdioServerParameters(
            command=args.adapter,
            args=["serve", "--config", args.config],
            env=server_environment(),
        )
    else:
        token = os.environ["HERDR_MCP_TOKEN"]
        http_client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        server = streamable_http_client(args.url, http_client=http_client)
    call = {"address": args.address, "text": args.text}
    try:
        async with Client(server, mode=mode, read_timeout_seconds=60, elicitation_callback=callback) as client:
            out: dict[str, Any] = {"protocol": client.protocol_version}
            if args.scenario == "send":
                started = time.monotonic()
                result = await client.call_tool("send_prompt", call, progress_callback=on_progress)
                elapsed_ms = round((time.monotonic() - started) * 1000, 1)
                out.update(asked=asked, result=structured(result), isError=bool(result.is_error),
                           elapsed_ms=elapsed_ms, progress=progress)
            else:
                session = client.session
                first = await session.call_tool("send_prompt", call, allow_input_required=True)
                out["first"] = "input_required" if isinstance(first, types.InputRequiredResult) else "complete"
                if isinstance(first, types.InputRequiredResult):
                    state = first.request_state or ""
                    yes = {key: {"action": "accept", "content": {"confirm": True}} for key in (first.input_requests or {})}
                    forged = state[:-2] + ("AA" if not state.endswith("AA") else "BB")
                    out["forged"] = structured(await session.call_tool(
                        "send_prompt", call, input_responses=yes, request_state=forged, allow_input_required=True))
                    out["other_text"] = structured(await session.call_tool(
                        "send_prompt", {**call, "text": call["text"] + " and rm -rf ~"},
                        input_responses=yes, request_state=state, allow_input_required=True))
                    out["accepted"] = structured(await session.call_tool(
                        "send_prompt", call, input_responses=yes, request_state=state, allow_input_required=True))
                    out["replayed"] = structured(await session.call_tool(
                        "send_prompt", call, input_responses=yes, request_state=state, allow_input_required=True))
            print(json.dumps(out, default=str))
    finally:
        if http_client is not None:
            await http_client.aclose()


if __name__ == "__main__":
    try:
        asyncio.run(main(parse()))
    except Exception as e:  # one line for the Rust test to show
        print(f"confirm_client: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
