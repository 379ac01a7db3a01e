#!/usr/bin/env bash
# Runs every test of the workspace: unit tests, the simulator's own tests and
# the integration suite (real simulator processes, the real adapter binary,
# real MCP clients, a real OAuth authorization server). Usage: scripts/test.sh [extra nextest/cargo test args]
# README.md, "Tests", says what it needs and how long it takes.
set -euo pipefail
cd "$(dirname "$0")/.."

# The fuzz targets' entry points (feature `fuzzing`) are compiled for the
# tests only, so their committed corpus is replayed on every run.
features=(--features herdr-core-mcp/fuzzing)
phase() { echo "test.sh: $*" >&2; }

# What this needs beyond Rust: Node.js with npm (the authorization server),
# python3 with venv (the Python SDK), and apt (root, or sudo) for the
# checkers of the generated files.
for tool in node npm python3; do
    command -v "$tool" >/dev/null 2>&1 || {
        phase "$tool is not installed: the OAuth tests need Node.js with npm and python3 with venv (see README, Tests)"
        exit 1
    }
done

# The OAuth tests run a real authorization server (oidc-provider, npm) and
# the official Python MCP SDK's OAuth client; installed project-locally,
# pinned, once.
phase "1/4 the OAuth test dependencies and the MCP registry's schema (npm and pip, pinned; once)"
scripts/oauth-deps.sh
scripts/registry-schema.sh
# The generated completions, man page and units are checked by the programs
# that read them (bash, zsh, fish, groff, mandoc, systemd-analyze).
phase "2/4 the checkers of the generated files (apt; once)"
scripts/check-generated.sh --install-only

# The integration tests spawn the simulator example and the adapter binary.
phase "3/4 building the adapter, the simulator and the examples (debug; the first build takes several minutes on 2 cores)"
cargo build --workspace --bins --examples "${features[@]}"

# cargo-nextest, when installed, runs each test in a process of its own
# (faster here, and a hung test is named). The suite passes under plain
# `cargo test` too, which runs it when nextest is not installed: nothing
# is compiled behind the user's back. HERDR_TEST_RUNNER=cargo or =nextest
# picks one.
runner="${HERDR_TEST_RUNNER:-}"
if [[ -z $runner ]]; then
    if cargo nextest --version >/dev/null 2>&1; then runner=nextest; else runner=cargo; fi
fi
if [[ $runner == nextest ]]; then
    phase "4/4 running the tests (cargo nextest)"
    cargo nextest run --workspace --no-fail-fast "${features[@]}" "$@"
else
    phase "4/4 running the tests (cargo test: cargo-nextest is not installed, and is not needed)"
    cargo test --workspace --no-fail-fast "${features[@]}" "$@"
fi
