#!/usr/bin/env bash
# End to end through an HTTPS reverse proxy, the way a remote MCP client
# reaches the adapter: curl --(TLS)--> nginx on 127.0.0.1 --(HTTP)--> the
# adapter's Streamable HTTP endpoint --> the bundled hc simulator.
#
# Installs Debian's nginx if it is missing, builds the adapter and the
# simulator, makes a throwaway self-signed certificate, runs everything from a
# temp directory, drives a real MCP session (initialize, tools/list,
# list_sessions, read_output, send_prompt) with curl, checks every answer, and
# removes everything it started on exit.
#
# Usage: scripts/e2e-https-proxy.sh   (from anywhere)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

say() { printf 'e2e-https-proxy: %s\n' "$*"; }
die() {
    printf 'e2e-https-proxy: FAILED: %s\n' "$*" >&2
    exit 1
}

WORK=""
SIM_PID=""
ADAPTER_PID=""
NGINX_PID=""
POLICY_RC_CREATED=""

stop_pid() {
    local pid="$1"
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

cleanup() {
    local status=$?
    set +e
    if [ "$status" -ne 0 ] && [ -n "$WORK" ] && [ -d "$WORK" ]; then
        for log in adapter.err nginx-error.log sim.err; do
            if [ -s "$WORK/$log" ]; then
                printf -- '--- %s (last lines)\n' "$log" >&2
                tail -n 15 "$WORK/$log" >&2
            fi
        done
    fi
    stop_pid "$NGINX_PID"
    stop_pid "$ADAPTER_PID"
    stop_pid "$SIM_PID"
    if [ -n "$POLICY_RC_CREATED" ]; then
        rm -f /usr/sbin/policy-rc.d
    fi
    if [ -n "$WORK" ]; then
        rm -rf "$WORK"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- nginx -------------------------------------------------------------------
find_nginx() {
    command -v nginx 2>/dev/null || { [ -x /usr/sbin/nginx ] && echo /usr/sbin/nginx; } || true
}
NGINX="$(find_nginx)"
if [ -z "$NGINX" ]; then
    say "nginx is missing: installing Debian's nginx"
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || die "nginx is missing and this is not root: install nginx (apt-get install nginx-light) and rerun"
        SUDO="sudo"
    fi
    # Keep the package from starting a system nginx on port 80.
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
        $SUDO chmod 755 /usr/sbin/policy-rc.d
        POLICY_RC_CREATED=1
    fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nginx-light >/dev/null ||
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nginx >/dev/null
    if [ -n "$POLICY_RC_CREATED" ]; then
        $SUDO rm -f /usr/sbin/policy-rc.d
        POLICY_RC_CREATED=""
    fi
    NGINX="$(find_nginx)"
    [ -n "$NGINX" ] || die "nginx is still missing after apt-get install"
fi
for tool in curl openssl python3; do
    command -v "$tool" >/dev/null || die "$tool is required"
done

# --- build -------------------------------------------------------------------
say "building the adapter and the simulator"
cargo build --quiet --bin herdr-core-mcp --example hc-sim --example demo
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
ADAPTER="$TARGET_DIR/debug/herdr-core-mcp"
SIM="$TARGET_DIR/debug/examples/hc-sim"
[ -x "$ADAPTER" ] && [ -x "$SIM" ] || die "built binaries not found under $TARGET_DIR/debug"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/herdr-e2e-https.XXXXXX")"
chmod 700 "$WORK"

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_for_port() { # port what
    for _ in $(seq 200); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    die "$2 did not listen on 127.0.0.1:$1"
}

# --- simulator ---------------------------------------------------------------
"$SIM" --socket "$WORK/hc.sock" --agents 2 --input-log "$WORK/input.log" \
    >"$WORK/sim.out" 2>"$WORK/sim.err" &
SIM_PID=$!
READY=""
for _ in $(seq 200); do
    READY="$(head -n 1 "$WORK/sim.out" 2>/dev/null || true)"
    case "$READY" in
        "ready core_id="*" socket="*) break ;;
    esac
    kill -0 "$SIM_PID" 2>/dev/null || die "hc-sim exited before it was ready"
    READY=""
    sleep 0.1
done
[ -n "$READY" ] || die "hc-sim printed no ready line"
CORE_ID="$(sed -n 's/^ready core_id=\([^ ]*\) socket=.*$/\1/p' <<<"$READY")"
SOCKET="$(sed -n 's/^ready core_id=[^ ]* socket=\(.*\)$/\1/p' <<<"$READY")"
[ -n "$CORE_ID" ] && [ -S "$SOCKET" ] || die "cannot parse the ready line: $READY"
say "hc-sim ready: core_id=$CORE_ID socket=$SOCKET"

# --- configs: probe with inspect-core, approve t1 only -----------------------
write_private() { # path (content on stdin)
    (umask 077 && cat >"$1")
}
write_private "$WORK/probe.json" <<EOF
{"socketPath": "$SOCKET"}
EOF
T1_CREATED=""
for _ in $(seq 100); do
    "$ADAPTER" inspect-core --config "$WORK/probe.json" --json >"$WORK/inspect.json"
    T1_CREATED="$(python3 -c '
import json, sys
core = json.load(open(sys.argv[1]))
terms = {t["address"]: t for t in core["terminals"]}
ok = core["core_id"] == sys.argv[2] and all(terms.get(a, {}).get("status") == "idle" for a in ("t1", "t2"))
print(terms["t1"]["created_ms"] if ok else "")
' "$WORK/inspect.json" "$CORE_ID")"
    [ -n "$T1_CREATED" ] && break
    sleep 0.1
done
[ -n "$T1_CREATED" ] || die "t1 and t2 never became idle"

ADAPTER_PORT="$(free_port)"
PROXY_PORT="$(free_port)"
[ "$ADAPTER_PORT" != "$PROXY_PORT" ] || PROXY_PORT="$(free_port)"
write_private "$WORK/config.http.json" <<EOF
{
  "socketPath": "$SOCKET",
  "transport": "http",
  "coreId": "$CORE_ID",
  "sendAllowlist": [{"address": "t1", "created_ms": $T1_CREATED}],
  "http": {
    "port": $ADAPTER_PORT,
    "allowedHosts": ["127.0.0.1:$ADAPTER_PORT", "127.0.0.1:$PROXY_PORT"]
  }
}
EOF

# --- adapter (the token lives only in its environment and a 0600 header file)
TOKEN="$(openssl rand -base64 32)"
write_private "$WORK/auth.header" <<<"Authorization: Bearer $TOKEN"
HERDR_MCP_TOKEN="$TOKEN" RUST_LOG=info "$ADAPTER" serve --config "$WORK/config.http.json" \
    </dev/null >"$WORK/adapter.out" 2>"$WORK/adapter.err" &
ADAPTER_PID=$!
wait_for_port "$ADAPTER_PORT" "the adapter"
say "adapter serving on 127.0.0.1:$ADAPTER_PORT (pid $ADAPTER_PID)"

# --- TLS proxy ---------------------------------------------------------------
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=127.0.0.1" \
    -addext "subjectAltName=IP:127.0.0.1" \
    -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null
mkdir -p "$WORK/nginx-tmp"
cat >"$WORK/nginx.conf" <<EOF
user $(id -un) $(id -gn);
worker_processes 1;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
events { worker_connections 64; }
http {
    access_log $WORK/nginx-access.log;
    client_body_temp_path $WORK/nginx-tmp/body;
    proxy_temp_path $WORK/nginx-tmp/proxy;
    fastcgi_temp_path $WORK/nginx-tmp/fastcgi;
    uwsgi_temp_path $WORK/nginx-tmp/uwsgi;
    scgi_temp_path $WORK/nginx-tmp/scgi;
    server {
        listen 127.0.0.1:$PROXY_PORT ssl;
        server_name 127.0.0.1;
        ssl_certificate $WORK/cert.pem;
        ssl_certificate_key $WORK/key.pem;
        client_max_body_size 64k;
        location = /mcp {
            proxy_pass http://127.0.0.1:$ADAPTER_PORT;
            proxy_http_version 1.1;
            proxy_set_header Host 127.0.0.1:$ADAPTER_PORT;
            proxy_set_header Authorization \$http_authorization;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_read_timeout 120s;
        }
        location / { return 404; }
    }
}
EOF
"$NGINX" -p "$WORK" -c "$WORK/nginx.conf" -e "$WORK/nginx-error.log" -t -q ||
    die "nginx rejected the generated config"
"$NGINX" -p "$WORK" -c "$WORK/nginx.conf" -e "$WORK/nginx-error.log" &
NGINX_PID=$!
wait_for_port "$PROXY_PORT" "nginx"
URL="https://127.0.0.1:$PROXY_PORT/mcp"
say "nginx (TLS) on 127.0.0.1:$PROXY_PORT -> adapter (pid $NGINX_PID)"

# --- the MCP session through the proxy ---------------------------------------
CHECKS=0
ok() {
    CHECKS=$((CHECKS + 1))
    say "ok  $*"
}

# post NAME JSON [--no-auth]: POSTs through the proxy; the body lands in
# $WORK/NAME.json, the headers in $WORK/NAME.head; prints the status code.
post() {
    local name="$1" json="$2" auth=(-H "@$WORK/auth.header")
    [ "${3:-}" = "--no-auth" ] && auth=()
    curl -sS --cacert "$WORK/cert.pem" --max-time 30 \
        -o "$WORK/$name.json" -D "$WORK/$name.head" -w '%{http_code}' \
        "${auth[@]}" \
        -H 'Content-Type: application/json' \
        -H 'Accept: application/json, text/event-stream' \
        -H 'MCP-Protocol-Version: 2025-06-18' \
        --data-binary "$json" "$URL"
}

# check NAME PYTHON-EXPR...: evaluates the expressions with `r` bound to the
# JSON body of NAME; prints a summary or fails with the body.
check() {
    local name="$1"
    shift
    python3 - "$WORK/$name.json" "$@" <<'PY' || die "$name: unexpected answer: $(head -c 600 "$WORK/$name.json")"
import json, sys
r = json.load(open(sys.argv[1]))
sc = (r.get("result") or {}).get("structuredContent") or {}
for expr in sys.argv[2:]:
    if not eval(expr, {"r": r, "sc": sc}):
        print(f"check failed: {expr}", file=sys.stderr)
        sys.exit(1)
PY
}

writes_to() {
    python3 -c '
import json, sys
try:
    lines = open(sys.argv[1]).read().splitlines()
except FileNotFoundError:
    lines = []
print(sum(1 for l in lines if json.loads(l).get("address") == sys.argv[2]))
' "$WORK/input.log" "$1"
}

call_tool() { # id name arguments-json
    printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s}}' "$1" "$2" "$3"
}

code="$(post initialize '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e-https-proxy","version":"0"}}}')"
[ "$code" = 200 ] || die "initialize: HTTP $code"
check initialize 'r["id"] == 1' 'r["result"]["protocolVersion"] == "2025-06-18"' \
    'r["result"]["serverInfo"]["name"] == "herdr-core-mcp"'
ok "initialize: HTTP 200, protocol 2025-06-18, server herdr-core-mcp"

code="$(post initialized '{"jsonrpc":"2.0","method":"notifications/initialized"}')"
[ "$code" = 202 ] || die "notifications/initialized: HTTP $code"
ok "notifications/initialized: HTTP 202"

code="$(post tools_list '{"jsonrpc":"2.0","id":2,"method":"tools/list"}')"
[ "$code" = 200 ] || die "tools/list: HTTP $code"
check tools_list '{"list_sessions", "read_output", "send_prompt"} <= {t["name"] for t in r["result"]["tools"]}'
ok "tools/list: $(python3 -c 'import json,sys; print(", ".join(t["name"] for t in json.load(open(sys.argv[1]))["result"]["tools"]))' "$WORK/tools_list.json")"

code="$(post list_sessions "$(call_tool 3 list_sessions '{}')")"
[ "$code" = 200 ] || die "list_sessions: HTTP $code"
check list_sessions 'not r["result"].get("isError")' "sc[\"core_id\"] == \"$CORE_ID\"" \
    '{s["address"]: s["send_approved"] for s in sc["sessions"]} == {"t1": True, "t2": False}'
ok "list_sessions: t1 send_approved, t2 not"

code="$(post read_output "$(call_tool 4 read_output '{"address":"t1"}')")"
[ "$code" = 200 ] || die "read_output: HTTP $code"
check read_output 'not r["result"].get("isError")' 'sc["address"] == "t1"' \
    'len(sc["text"]) > 0' 'sc["total_chars"] == len(sc["text"])'
ok "read_output t1: $(python3 -c 'import json,sys; print(repr(json.load(open(sys.argv[1]))["result"]["structuredContent"]["text"][-40:]))' "$WORK/read_output.json")"

code="$(post send_t1 "$(call_tool 5 send_prompt '{"address":"t1","text":"hello through the TLS proxy"}')")"
[ "$code" = 200 ] || die "send_prompt t1: HTTP $code"
check send_t1 'sc["outcome"] == "sent"' 'not r["result"].get("isError")' 'sc["address"] == "t1"'
[ "$(writes_to t1)" = 1 ] || die "send_prompt t1: $(writes_to t1) writes in the input log, expected 1"
ok "send_prompt t1: sent, exactly one write in the input log"

code="$(post send_t2 "$(call_tool 6 send_prompt '{"address":"t2","text":"not approved"}')")"
[ "$code" = 200 ] || die "send_prompt t2: HTTP $code"
check send_t2 'sc["outcome"] == "not_sent"' 'sc["reason_code"] == "not_approved"' 'r["result"].get("isError") is True'
[ "$(writes_to t2)" = 0 ] || die "send_prompt t2: a refused send wrote input"
ok "send_prompt t2 (unapproved): not_sent/not_approved, zero writes"

code="$(post no_token '{"jsonrpc":"2.0","id":7,"method":"tools/list"}' --no-auth)"
[ "$code" = 401 ] || die "no token: HTTP $code, expected 401"
grep -qi '^www-authenticate: Bearer' "$WORK/no_token.head" || die "no token: no WWW-Authenticate: Bearer through the proxy"
ok "no token through the proxy: HTTP 401 with WWW-Authenticate: Bearer"

printf 'Authorization: Bearer %s\n' "$(openssl rand -base64 32)" | write_private "$WORK/wrong.header"
code="$(curl -sS --cacert "$WORK/cert.pem" --max-time 30 -o /dev/null -w '%{http_code}' \
    -H "@$WORK/wrong.header" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    --data-binary '{"jsonrpc":"2.0","id":8,"method":"tools/list"}' "$URL")"
[ "$code" = 401 ] || die "wrong token: HTTP $code, expected 401"
ok "wrong token through the proxy: HTTP 401"

if grep -qF -- "$TOKEN" "$WORK/adapter.err" "$WORK/nginx-error.log" "$WORK/nginx-access.log" 2>/dev/null; then
    die "the token reached a log"
fi
ok "the token is in no log"

say "all $CHECKS checks passed (https://127.0.0.1:$PROXY_PORT/mcp -> 127.0.0.1:$ADAPTER_PORT)"
