#!/usr/bin/env bash
# Installs what the OAuth resource-server tests run, project-locally and only
# when missing, so calling it before every test run is cheap:
#   - the test authorization server's npm packages (tests/oauth/provider,
#     `npm ci` from the committed package-lock.json), when node_modules is
#     missing, holds another oidc-provider version than the lock pins, or is
#     older than the lock;
#   - the Python MCP SDK for tests/oauth/client.py, into .interop/venv, exactly
#     as scripts/interop.sh installs it (same pinned version, read from that
#     script, and the same constraints file).
# Says one line on stderr per thing it installs and nothing when all is there.
# Exits non-zero with a message when node, npm or python3 is missing or an
# install fails.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

PROVIDER_DIR="$ROOT/tests/oauth/provider"
VENV="$ROOT/.interop/venv"
PY="$VENV/bin/python"
CONSTRAINTS="$ROOT/tests/interop/constraints.txt"

say() { printf 'oauth-deps: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

for tool in node npm python3; do
  command -v "$tool" >/dev/null || die "$tool is required but not on PATH"
done

# The one pin of the Python SDK lives in scripts/interop.sh.
PY_MCP_VERSION="$(sed -n 's/^PY_MCP_VERSION=\([0-9][0-9A-Za-z.]*\)$/\1/p' "$ROOT/scripts/interop.sh")"
[[ -n $PY_MCP_VERSION ]] || die "no PY_MCP_VERSION=... line in scripts/interop.sh"

# ------------------------------------------------------ authorization server ---
provider_installed() {
  (cd "$PROVIDER_DIR" && node -e '
    const fs = require("fs");
    const lock = JSON.parse(fs.readFileSync("package-lock.json", "utf8"));
    const want = lock.packages?.["node_modules/oidc-provider"]?.version;
    const have = JSON.parse(fs.readFileSync("node_modules/oidc-provider/package.json", "utf8")).version;
    process.exit(want && have === want ? 0 : 1);' 2>/dev/null) &&
    ! [[ "$PROVIDER_DIR/package-lock.json" -nt "$PROVIDER_DIR/node_modules/.package-lock.json" ]]
}
if ! provider_installed; then
  say "installing the test authorization server (oidc-provider) into tests/oauth/provider (npm ci)"
  (cd "$PROVIDER_DIR" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
    die "npm ci failed in tests/oauth/provider"
  provider_installed || die "npm ci did not install the locked oidc-provider in tests/oauth/provider"
fi

# -------------------------------------------------------- Python MCP SDK -----
py_mcp_installed() {
  [[ -x "$PY" ]] && [[ "$("$PY" -c 'import importlib.metadata as m; print(m.version("mcp"))' 2>/dev/null)" == "$PY_MCP_VERSION" ]]
}
if ! py_mcp_installed; then
  say "installing the Python MCP SDK mcp==$PY_MCP_VERSION into .interop/venv"
  [[ -x "$PY" ]] || python3 -m venv "$VENV" || die "python3 -m venv $VENV failed"
  "$PY" -m pip install --quiet --disable-pip-version-check \
    "mcp==$PY_MCP_VERSION" -c "$CONSTRAINTS" || die "pip could not install mcp==$PY_MCP_VERSION"
  py_mcp_installed || die "mcp==$PY_MCP_VERSION did not install into $VENV"
fi
