#!/usr/bin/env bash
# Soak: 32 concurrent HTTP clients mixing every tool
# (list_sessions, read_output, send_prompt to approved and unapproved
# terminals, wait_for_status, wait_for_output) against the bundled hc simulator for
# DURATION_SECONDS (default 600), sampling the adapter's VmRSS and open
# descriptors. Fails on any protocol error, on the adapter dying, and on
# growth beyond noise: after a warm-up (a tenth of the run, at least 5 s),
# the last quarter's highest VmRSS may exceed the first quarter's by at most
# max(1 MiB, 5%), and its highest descriptor count by at most 4.
#
# Usage: scripts/soak.sh [DURATION_SECONDS] [loadgen soak options]
#        e.g. scripts/soak.sh 60 --seed 42
set -euo pipefail
cd "$(dirname "$0")/.."

duration="${1:-600}"
shift || true
cargo build --release --quiet --bin herdr-core-mcp --example hc-sim --example loadgen
exec target/release/examples/loadgen soak --duration-secs "$duration" "$@"
