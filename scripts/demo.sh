#!/usr/bin/env bash
# The main job end to end against the bundled hc simulator: builds the
# adapter and the simulator (release), probes the core with inspect-core,
# approves one terminal, then runs an MCP session over stdio that lists,
# sends a prompt, reads the reply, and sees an unapproved send refused.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "demo: building the adapter, the hc simulator and the demo client (release): the first build takes several minutes on 2 cores, its last step (linking) with little output" >&2
cargo build --release --bin herdr-core-mcp --example hc-sim --example demo
echo "demo: built; running the demo against the simulator" >&2
exec target/release/examples/demo
