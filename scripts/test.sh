#!/usr/bin/env bash
# Runs every test of the workspace: unit tests, the simulator's own tests and
# the integration suite (real simulator processes, the real adapter binary,
# real MCP clients). Usage: scripts/test.sh [extra nextest/cargo test args]
set -euo pipefail
cd "$(dirname "$0")/.."

# The integration tests spawn the simulator example and the adapter binary.
cargo build --workspace --bins --examples --quiet

if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --workspace --no-fail-fast "$@"
else
    cargo test --workspace --no-fail-fast "$@"
fi
