#!/usr/bin/env bash
# The main job end to end against the bundled hc simulator: builds the
# adapter and the simulator (the debug build scripts/test.sh uses too, so
# the tests build nothing again after the demo), probes the core with inspect-core,
# approves one terminal, then runs an MCP session over stdio that lists,
# sends a prompt, reads the reply, and sees an unapproved send refused.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "demo: $*" >&2; }
say "building the adapter, the hc simulator and the demo client (debug, the build scripts/test.sh reuses): the first build takes a few minutes on 2 cores"
start=$SECONDS
cargo build --workspace --bins --examples --features herdr-core-mcp/fuzzing &
build=$!
# cargo prints nothing while it links the last programs: say so, every 20 s.
while sleep 20; kill -0 "$build" 2>/dev/null; do
  say "still building after $((SECONDS - start)) s (compiling, or linking the programs, which prints nothing)"
done &
ticker=$!
status=0
wait "$build" || status=$?
kill "$ticker" 2>/dev/null || true
wait "$ticker" 2>/dev/null || true
[[ $status -eq 0 ]] || { say "the build failed (exit $status)"; exit "$status"; }
say "built in $((SECONDS - start)) s; running the demo against the simulator"
exec target/debug/examples/demo
