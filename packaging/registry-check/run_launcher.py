#!/usr/bin/env python3
"""Runs `serve` through a package launcher (`npx -y herdr-core-mcp`, `uvx
herdr-core-mcp`, ...) as an MCP host runs it, in two passes, with the
official MCP Python SDK (`mcp`, the version scripts/interop.sh pins):

    run_launcher.py --runs N -- COMMAND... serve --config FILE

1. Raw, N times: writes `initialize`, `notifications/initialized` and
   `tools/list` to the command's stdin, closes it, and reads stdout to the
   end. Every line must be a JSON-RPC 2.0 message answering one of the two
   requests (nothing else may reach stdout: no launcher output), and the
   command must exit 0 once stdin closes. Times how long the first answer
   took (the start as a host sees it).
2. The SDK: starts COMMAND over stdio, lists the tools, lists the
   terminals, reads t1's screen, sends t1 (approved) a prompt, waits for its
   reply on the screen, and sees a send to the unapproved shell t3 refused.

Prints one JSON line:
  {"start_ms": [...], "tools": [...], "sessions": [...], "sent": ...,
   "reply": "...", "refused": "..."}
Exit 0 when every check passed; 1 with a message otherwise.
"""

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import time
from typing import Any

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

# A cold start through npx or uvx resolves the package first.
TIMEOUT_S = 60


def request(id_: int, method: str, params: dict[str, Any]) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}) + "\n").encode()


def raw_run(command: list[str]) -> float:
    """One raw exchange; returns the milliseconds until `initialize` was
    answered."""
    started = time.monotonic()
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert child.stdin and child.stdout
    child.stdin.write(
        request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "run_launcher", "version": "1"}}))
    child.stdin.flush()
    first = child.stdout.readline()
    answered_ms = (time.monotonic() - started) * 1000
    child.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
    child.stdin.write(request(2, "tools/list", {}))
    child.stdin.close()
    rest = child.stdout.read()
    code = child.wait(TIMEOUT_S)
    lines = [first, *rest.splitlines(keepends=True)]
    ids = []
    for line in lines:
        message = json.loads(line)  # a line that is not JSON fails the run
        if message.get("jsonrpc") != "2.0" or "result" not in message:
            raise RuntimeError(f"stdout carried something other than an answer: {line!r}")
        ids.append(message["id"])
    if ids != [1, 2]:
        raise RuntimeError(f"stdout answered ids {ids}, expected [1, 2]")
    if code != 0:
        raise RuntimeError(f"exited {code} after stdin closed")
    return answered_ms


async def session(command: list[str]) -> dict[str, Any]:
    server = StdioServerParameters(command=command[0], args=command[1:], env={"RUST_LOG": "warn"})
    async with Client(server, read_timeout_seconds=TIMEOUT_S) as client:

        async def call(tool: str, args: dict[str, Any], error: bool = False) -> dict[str, Any]:
            result = await client.call_tool(tool, args)
            if bool(result.is_error) != error:
                raise RuntimeError(f"{tool} {args}: isError {result.is_error}: {result.content[0].text}")
            return result.structured_content

        tools = sorted(t.name for t in (await client.list_tools()).tools)
        sessions = [s["address"] for s in (await call("list_sessions", {}))["sessions"]]
        await call("read_output", {"address": "t1"})
        text = f"hello through {os.path.basename(command[0])}"
        sent = await call("send_prompt", {"address": "t1", "text": text})
        if sent["outcome"] != "sent":
            raise RuntimeError(f"send_prompt to t1: {sent}")
        waited = await call("wait_for_output", {"address": "t1", "pattern": f"^reply: {re.escape(text)}$",
                                                "timeout_ms": 30000})
        if waited["outcome"] != "matched":
            raise RuntimeError(f"no reply on t1's screen: {waited}")
        refused = await call("send_prompt", {"address": "t3", "text": "echo no"}, error=True)
        return {"tools": tools, "sessions": sessions, "sent": sent["outcome"],
                "reply": waited["match"]["line"], "refused": refused["reason_code"]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("command", nargs="+")
    args = p.parse_args()
    start_ms = [round(raw_run(args.command)) for _ in range(args.runs)]
    ran = asyncio.run(session(args.command))
    print(json.dumps({"start_ms": start_ms, **ran}))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001 - one line for the caller
        print(f"run_launcher.py: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
