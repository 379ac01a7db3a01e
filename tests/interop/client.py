#!/usr/bin/env python3
"""One full herdr-core-mcp session through the official MCP Python SDK (`mcp`).

Run by scripts/interop.sh against a fresh hc-sim whose terminal t1 (an agent)
is the only approved one. Prints one `PASS` line per check and exits non-zero
with a `FAIL` line on the first mismatch.

    client.py --transport stdio --adapter BIN --config FILE [--era legacy|current]
    client.py --transport http  --url http://127.0.0.1:PORT/mcp [--era ...]
              (bearer token from the environment variable HERDR_MCP_TOKEN)

Eras: `legacy` forces the `initialize` handshake (`mode="legacy"`: the SDK
offers its newest handshake revision, 2025-11-25); `current` lets the SDK
negotiate as it does by default (`mode="auto"`: it probes `server/discover`
with its newest revision, 2026-07-28, and would fall back to `initialize` on a
legacy server), and then requires that 2026-07-28 was actually negotiated.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import sys
import time
from importlib.metadata import version as dist_version
from typing import Any

import anyio

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_MODERN_VERSION

TAG = "py"
EXPECTED_INPUTS = {
    "list_sessions": {"include_finished", "limit", "cursor"},
    "read_output": {"address", "created_ms", "max_chars"},
    "send_prompt": {"address", "text", "created_ms"},
    "wait_for_output": {"address", "created_ms", "pattern", "quiet_ms", "timeout_ms", "max_chars"},
}
READ_ONLY = {"list_sessions": True, "read_output": True, "send_prompt": False, "wait_for_output": True}
LEGACY_VERSIONS = {"2025-06-18", "2025-11-25"}
REPLY_TIMEOUT_S = 30.0


class Mismatch(Exception):
    pass


def ok(what: str) -> None:
    print(f"PASS [{TAG}] {what}", flush=True)


def check(cond: bool, what: str, detail: Any = None) -> None:
    if not cond:
        extra = "" if detail is None else f": {detail if isinstance(detail, str) else json.dumps(detail, default=str)[:2000]}"
        raise Mismatch(f"{what}{extra}")
    ok(what)


def structured(result: Any, tool: str) -> dict[str, Any]:
    sc = result.structured_content
    if not isinstance(sc, dict):
        raise Mismatch(f"{tool}: no structuredContent object in the result: {result!r}")
    return sc


async def call(client: Client, tool: str, args: dict[str, Any], *, expect_error: bool = False) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    sc = structured(result, tool)
    if bool(result.is_error) != expect_error:
        raise Mismatch(f"{tool}({json.dumps(args)}): isError={result.is_error}, expected {expect_error}: {json.dumps(sc)[:2000]}")
    texts = [c for c in result.content if getattr(c, "type", None) == "text"]
    if not texts:
        raise Mismatch(f"{tool}: result has no text content block")
    return sc


async def session(args: argparse.Namespace) -> None:
    global TAG
    TAG = f"python-mcp {dist_version('mcp')} {args.transport} {args.era}"
    mode = "legacy" if args.era == "legacy" else "auto"

    if args.transport == "stdio":
        server: Any = StdioServerParameters(
            command=args.adapter,
            args=["serve", "--config", args.config],
            env={"RUST_LOG": os.environ.get("RUST_LOG", "warn")},
        )
        http_client = None
    else:
        token = os.environ.get("HERDR_MCP_TOKEN")
        if not token:
            raise Mismatch("HERDR_MCP_TOKEN is not set")
        http_client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        server = streamable_http_client(args.url, http_client=http_client)

    try:
        async with Client(server, mode=mode, read_timeout_seconds=60) as client:
            await run_checks(client, args)
    finally:
        if http_client is not None:
            await http_client.aclose()


async def run_checks(client: Client, args: argparse.Namespace) -> None:
    negotiated = client.protocol_version
    if args.era == "legacy":
        check(negotiated in LEGACY_VERSIONS and negotiated in HANDSHAKE_PROTOCOL_VERSIONS,
              f"initialize handshake negotiated {negotiated}")
    else:
        check(negotiated == LATEST_MODERN_VERSION,
              f"server/discover negotiated {negotiated} (SDK's newest: {LATEST_MODERN_VERSION})")
    info = client.server_info
    name = info.name if info else None
    if args.era == "legacy" or name is not None:
        check(name == "herdr-core-mcp", f"server identifies as {name!r}")

    # --- tools/list (every page) ---
    tools: dict[str, Any] = {}
    cursor = None
    for _ in range(20):
        page = await client.list_tools(cursor=cursor)
        for t in page.tools:
            tools[t.name] = t
        cursor = page.next_cursor
        if not cursor:
            break
    check(set(EXPECTED_INPUTS) <= set(tools), f"tools/list has {sorted(EXPECTED_INPUTS)} (all: {sorted(tools)})")
    for name, props in EXPECTED_INPUTS.items():
        t = tools[name]
        have = set((t.input_schema or {}).get("properties", {}))
        check(props <= have, f"{name} inputSchema properties {sorted(props)}", sorted(have))
        check(isinstance(t.output_schema, dict) and t.output_schema.get("type") == "object",
              f"{name} has an object outputSchema", t.output_schema)
        ro = t.annotations.read_only_hint if t.annotations else None
        check(ro is READ_ONLY[name], f"{name} readOnlyHint is {READ_ONLY[name]}", f"got {ro!r}")

    # --- list_sessions ---
    listing = await call(client, "list_sessions", {"limit": 100})
    sessions = listing.get("sessions")
    check(isinstance(sessions, list) and isinstance(listing.get("core_id"), str) and "next_cursor" in listing,
          f"list_sessions returned {len(sessions or [])} sessions of core {listing.get('core_id')}", listing)
    approved = [s for s in sessions if s.get("send_approved") is True]
    check(len(approved) == 1 and approved[0]["address"] == "t1",
          "exactly one approved session, t1", [(s.get("address"), s.get("send_approved")) for s in sessions])
    agent = approved[0]
    check(agent.get("status") == "idle", "approved agent t1 is idle", agent)
    unapproved = [s for s in sessions if s.get("send_approved") is False and s.get("finished_ms") is None]
    shells = [s for s in unapproved if s.get("program") == "sh"] or unapproved
    check(bool(shells), f"an unapproved live terminal exists ({shells[0]['address'] if shells else None})", sessions)
    other = shells[0]

    # --- read_output ---
    screen = await call(client, "read_output", {"address": agent["address"], "created_ms": agent["created_ms"]})
    check(screen.get("address") == agent["address"] and screen.get("created_ms") == agent["created_ms"]
          and isinstance(screen.get("text"), str) and isinstance(screen.get("total_chars"), int)
          and screen.get("status") in {"idle", "working", "done", "blocked", "error", "unknown"},
          f"read_output t1: status {screen.get('status')}, {screen.get('total_chars')} chars", screen)

    # --- send_prompt to the approved agent ---
    prompt = f"interop {args.transport} {args.era} {secrets.token_hex(4)}"
    sent = await call(client, "send_prompt", {"address": agent["address"], "text": prompt, "created_ms": agent["created_ms"]})
    check(sent.get("outcome") == "sent" and sent.get("address") == agent["address"] and sent.get("chars") == len(prompt),
          f"send_prompt to t1: outcome sent ({sent.get('reason_code')})", sent)

    # --- wait_for_output until the agent's reply is on screen ---
    want = f"reply: {prompt}"
    waited = await call(client, "wait_for_output", {"address": agent["address"], "created_ms": agent["created_ms"],
                                                    "pattern": f"^{re.escape(want)}$", "timeout_ms": 30000})
    check(waited.get("outcome") == "matched" and (waited.get("match") or {}).get("line") == want,
          f"wait_for_output t1 matched {want!r}", waited)

    # --- then read_output until the agent reports done ---
    deadline = time.monotonic() + REPLY_TIMEOUT_S
    last: dict[str, Any] = {}
    while time.monotonic() < deadline:
        last = await call(client, "read_output", {"address": agent["address"], "created_ms": agent["created_ms"]})
        if want in last.get("text", "") and last.get("status") == "done":
            break
        await anyio.sleep(0.2)
    check(want in last.get("text", "") and last.get("status") == "done",
          f"read_output t1 shows {want!r} with status done", last)

    # --- refused send to an unapproved terminal ---
    refused = await call(client, "send_prompt", {"address": other["address"], "text": "echo must-not-run"}, expect_error=True)
    check(refused.get("outcome") == "not_sent" and refused.get("reason_code") == "not_approved",
          f"send_prompt to unapproved {other['address']}: not_sent/not_approved with isError", refused)


def unwrap(e: BaseException) -> BaseException:
    """The first leaf of an (anyio) exception group."""
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    return e


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--transport", choices=["stdio", "http"], required=True)
    p.add_argument("--era", choices=["legacy", "current"], default="current")
    p.add_argument("--adapter", help="herdr-core-mcp binary (stdio)")
    p.add_argument("--config", help="adapter config file (stdio)")
    p.add_argument("--url", help="MCP endpoint, e.g. http://127.0.0.1:8765/mcp (http)")
    args = p.parse_args()
    if args.transport == "stdio" and not (args.adapter and args.config):
        p.error("--transport stdio needs --adapter and --config")
    if args.transport == "http" and not args.url:
        p.error("--transport http needs --url")
    try:
        anyio.run(session, args)
    except Mismatch as e:
        print(f"FAIL [{TAG}] {e}", flush=True)
        return 1
    except BaseException as e:  # noqa: BLE001 - any SDK/transport failure is a failed run
        inner = unwrap(e)
        if isinstance(inner, Mismatch):
            print(f"FAIL [{TAG}] {inner}", flush=True)
        else:
            print(f"FAIL [{TAG}] {type(inner).__name__}: {inner!r}", flush=True)
        return 1
    print(f"OK [{TAG}] full session passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
