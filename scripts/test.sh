#!/usr/bin/env bash
# Runs every test of the workspace: unit tests, the simulator's own tests and
# the integration suite (real simulator processes, the real adapter binary,
# real MCP clients, a real OAuth authorization server). Usage: scripts/test.sh [extra nextest/cargo test args]
set -euo pipefail
cd "$(dirname "$0")/.."

# The fuzz targets' entry points (feature `fuzzing`) are compiled for the
# tests only, so their committed corpus is replayed on every run.
features=(--features herdr-core-mcp/fuzzing)

# The OAuth tests run a real authorization server (oidc-provider, npm) and
# the official Python MCP SDK's OAuth client; installed project-locally,
# pinned, once.
scripts/oauth-deps.sh
# The generated completions, man page and units are checked by the programs
# that read them (bash, zsh, fish, groff, mandoc, systemd-analyze).
scripts/check-generated.sh --install-only

# The integration tests spawn the simulator example and the adapter binary.
cargo build --workspace --bins --examples --quiet "${features[@]}"

if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --workspace --no-fail-fast "${features[@]}" "$@"
else
    cargo test --workspace --no-fail-fast "${features[@]}" "$@"
fi
