#!/usr/bin/env python3
"""An OAuth MCP client for the resource-server tests, built on the official MCP
Python SDK (`mcp`, the version scripts/interop.sh pins, from .interop/venv).

    client.py --url http://127.0.0.1:PORT/mcp --scenario list|send|send-read-only
              [--address t1] [--text "..."] [--redirect-uri URI]
              [--auth-method none|client_secret_basic|client_secret_post]
              [--era auto|legacy] [--timeout 60] [--verbose]

The SDK's `OAuthClientProvider` does all of the OAuth: it reads the server's 401
challenge and protected resource metadata (RFC 9728), discovers the authorization
server (RFC 8414 / OIDC discovery), registers dynamically (RFC 7591), and runs the
authorization code flow with PKCE and the `resource` parameter (RFC 8707); on a 403
`insufficient_scope` it re-authorizes with the union of its scopes and the
challenged one, and retries. Tokens and the registration live in memory only.

The browser is automated: the authorization URL is fetched with a cookie-keeping
HTTP client that follows the authorization server's redirects (its login and
consent interactions finish by themselves, see tests/oauth/provider) up to, but
not into, the redirect to the client's redirect_uri, whose code, state and iss
go to the SDK's callback handler. Nothing listens on the redirect_uri.

Scenarios, each printing one JSON line on stdout ("authorizations": how many times
the browser went through the authorization endpoint; 2 means one step-up):
  list            {"tools": [sorted names], "scopes": "<scope of the token>",
                   "authorizations": N}
  send            {"tools": [...], "result": <structuredContent, else content>,
                   "isError": bool, "scopes_after": "<scope of the token>",
                   "authorizations": N}
  send-read-only  {"status": <HTTP status>, "www_authenticate": "<header>",
                   "body": "<body text>", "sdk_error": "<what the SDK did>",
                   "scopes_after": "<scope of the token>",
                   "raw_scope": "<scope of the token replayed>", "authorizations": N}
                  send_prompt through the SDK (expected to fail: the step-up
                  yields no herdr.send), then the SDK's own tools/call request
                  replayed by hand (same headers and body) with the read token,
                  to show the server's answer as it is on the wire.

Exit 0 when the scenario ran (the caller judges the JSON); 1 with a one-line
message on stderr otherwise, including when --timeout (default 60 s) runs out.
"""

from __future__ import annotations

import argparse
import json
import logging
import socket
import sys
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
import httpx2

from mcp.client import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

MAX_BROWSER_HOPS = 20


class Failure(Exception):
    pass


class MemoryStorage(TokenStorage):
    """The SDK's TokenStorage protocol, in memory; keeps every token it was given."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None
        self.history: list[OAuthToken] = []

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        self.history.append(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


def _same_endpoint(a: str, b: str) -> bool:
    x, y = urlsplit(a), urlsplit(b)
    return (x.scheme, x.hostname, x.port, x.path or "/") == (y.scheme, y.hostname, y.port, y.path or "/")


class Browser:
    """Plays the user agent: follows the authorization server's redirects and hands the
    final redirect's parameters to the SDK."""

    def __init__(self, redirect_uri: str) -> None:
        self.redirect_uri = redirect_uri
        # One cookie jar for the whole run, as a browser would have: a second
        # authorization (the step-up) reuses the login session.
        self.http = httpx2.AsyncClient(follow_redirects=False, timeout=30.0)
        self.result: AuthorizationCodeResult | None = None
        self.authorizations = 0

    async def aclose(self) -> None:
        await self.http.aclose()

    async def redirect_handler(self, authorization_url: str) -> None:
        self.result = None
        self.authorizations += 1
        url = authorization_url
        for _ in range(MAX_BROWSER_HOPS):
            response = await self.http.get(url)
            if response.status_code not in (301, 302, 303, 307, 308):
                raise Failure(
                    f"authorization stopped at {url.split('?')[0]} with HTTP {response.status_code}: "
                    f"{response.text[:300]!r}"
                )
            location = response.headers.get("location")
            if not location:
                raise Failure(f"redirect without Location from {url.split('?')[0]}")
            url = urljoin(str(response.url), location)
            if _same_endpoint(url, self.redirect_uri):
                query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
                if "error" in query:
                    raise Failure(
                        f"authorization server answered {query['error']}: {query.get('error_description', '')}"
                    )
                if "code" not in query:
                    raise Failure(f"redirect to the client without a code: {url}")
                self.result = AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))
                return
        raise Failure(f"more than {MAX_BROWSER_HOPS} redirects during authorization")

    async def callback_handler(self) -> AuthorizationCodeResult:
        if self.result is None:
            raise Failure("no authorization response to hand back")
        return self.result


def free_loopback_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tool_result_json(result: Any) -> Any:
    if result.structured_content is not None:
        return result.structured_content
    return [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in result.content]


def token_scope(storage: MemoryStorage) -> str | None:
    return storage.tokens.scope if storage.tokens else None


def describe(e: BaseException) -> str:
    """One line for an exception, unwrapping (anyio) exception groups; an MCP error
    with its JSON-RPC code (the transport's mapping of an HTTP status, for one)."""
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    error = getattr(e, "error", None)
    code = getattr(error, "code", None)
    detail = f"{type(e).__name__}(code={code}): {e}" if code is not None else f"{type(e).__name__}: {e}"
    return detail.replace("\n", " ")


async def list_tool_names(client: Client) -> list[str]:
    names: list[str] = []
    cursor = None
    for _ in range(20):
        page = await client.list_tools(cursor=cursor)
        names.extend(t.name for t in page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return sorted(names)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    redirect_uri = args.redirect_uri or f"http://127.0.0.1:{free_loopback_port()}/callback"
    storage = MemoryStorage()
    browser = Browser(redirect_uri)
    metadata = OAuthClientMetadata(
        client_name="herdr-core-mcp OAuth test client",
        redirect_uris=[redirect_uri],
        token_endpoint_auth_method=args.auth_method,
    )
    auth = OAuthClientProvider(
        server_url=args.url,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=browser.redirect_handler,
        callback_handler=browser.callback_handler,
    )

    # Remember the SDK's own send_prompt request, to replay it with the read token.
    sent_calls: list[httpx2.Request] = []

    async def on_request(request: httpx2.Request) -> None:
        if request.method == "POST" and _same_endpoint(str(request.url), args.url):
            try:
                body = json.loads(request.content or b"null")
            except ValueError:
                return
            if isinstance(body, dict) and body.get("method") == "tools/call":
                sent_calls.append(request)

    http_client = create_mcp_http_client(auth=auth)
    http_client.event_hooks["request"].append(on_request)
    out: dict[str, Any] = {}
    try:
        server = streamable_http_client(args.url, http_client=http_client)
        async with Client(server, mode=args.era, read_timeout_seconds=args.timeout) as client:
            tools = await list_tool_names(client)
            if args.scenario == "list":
                return {"tools": tools, "scopes": token_scope(storage), "authorizations": browser.authorizations}

            arguments = {"address": args.address, "text": args.text}
            if args.scenario == "send":
                result = await client.call_tool("send_prompt", arguments)
                return {
                    "tools": tools,
                    "result": tool_result_json(result),
                    "isError": bool(result.is_error),
                    "scopes_after": token_scope(storage),
                    "authorizations": browser.authorizations,
                }

            # send-read-only
            try:
                result = await client.call_tool("send_prompt", arguments)
                sdk_error = f"no error: isError={bool(result.is_error)} result={json.dumps(tool_result_json(result))}"
            except Exception as e:  # what the SDK raises is the point of this scenario
                sdk_error = describe(e)
            out = {"tools": tools, "sdk_error": sdk_error, "scopes_after": token_scope(storage)}
            protocol_version = client.protocol_version
    finally:
        await http_client.aclose()
        await browser.aclose()

    # send-read-only, continued: the SDK's tools/call, by hand, with the read token
    # (the newest token without herdr.send; the newest token if every one has it).
    if storage.tokens is None:
        raise Failure("no access token was issued")
    read_only = [t for t in storage.history if "herdr.send" not in (t.scope or "").split()]
    token = read_only[-1] if read_only else storage.tokens
    if sent_calls:
        template = sent_calls[0]
        headers = {k: v for k, v in template.headers.items() if k.lower() not in ("authorization", "content-length", "host")}
        body = template.content
    else:
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                   "MCP-Protocol-Version": protocol_version}
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "send_prompt", "arguments": arguments}}).encode()
    headers["Authorization"] = f"Bearer {token.access_token}"
    async with httpx2.AsyncClient(timeout=30.0) as raw:
        response = await raw.post(args.url, headers=headers, content=body)
    return {
        "status": response.status_code,
        "www_authenticate": response.headers.get("www-authenticate", ""),
        "body": response.text,
        "sdk_error": out["sdk_error"],
        "scopes_after": out["scopes_after"],
        "raw_scope": token.scope,
        "authorizations": browser.authorizations,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the MCP endpoint, e.g. http://127.0.0.1:8765/mcp")
    parser.add_argument("--scenario", required=True, choices=["list", "send", "send-read-only"])
    parser.add_argument("--address", default="t1")
    parser.add_argument("--text", default="hello from the OAuth test client")
    parser.add_argument("--redirect-uri", help="registered redirect URI (default http://127.0.0.1:<free port>/callback)")
    parser.add_argument("--auth-method", default="none",
                        choices=["none", "client_secret_basic", "client_secret_post"],
                        help="token_endpoint_auth_method to register with (default none: a public client)")
    parser.add_argument("--era", default="auto", choices=["auto", "legacy"],
                        help="auto: the SDK's default negotiation; legacy: the initialize handshake")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds for the whole scenario")
    parser.add_argument("--verbose", action="store_true", help="let the SDK log to stderr")
    args = parser.parse_args()
    if args.scenario != "list" and (not args.address or args.text is None):
        parser.error("--address and --text are needed for send scenarios")
    # The SDK logs its own OAuth failures with tracebacks; the scenario reports them itself.
    logging.basicConfig(level=logging.INFO if args.verbose else logging.CRITICAL, stream=sys.stderr)

    async def bounded() -> dict[str, Any] | None:
        with anyio.move_on_after(args.timeout):
            return await run(args)
        return None

    try:
        out = anyio.run(bounded)
    except Exception as e:
        print(f"oauth client ({args.scenario}): {describe(e)}", file=sys.stderr)
        return 1
    if out is None:
        print(f"oauth client ({args.scenario}): timed out after {args.timeout:g} s", file=sys.stderr)
        return 1
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
