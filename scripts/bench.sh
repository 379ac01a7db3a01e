#!/usr/bin/env bash
# The performance table, measured in one run against the bundled
# hc simulator: builds the adapter, the simulator and the load generator in
# the `dist` profile (what the release archives ship: fat LTO), prints the
# machine, then runs `loadgen bench` (latency,
# throughput, OAuth against token mode, memory, start-up, byte caps;
# PASS/MISS per target), and last the adapter against the floor of its
# stack (examples/floor, a minimal rmcp server on the same crates, and the
# do-nothing relay): ratios of CPU per call, wall median and calls/s on
# stdio, HTTP with 1 and with 32 clients, syscalls per call (strace -c -f)
# side by side, user-space instructions per stdio call (valgrind), and
# idle and 32-client memory.
#
# Usage: scripts/bench.sh [loadgen bench options]   e.g. --level-secs 10
#        scripts/bench.sh --only floor              the floor phase alone
# Exit: 0 all targets pass, 3 a target was missed, 1 the bench failed.
# Needs strace for the bytes-read figure and valgrind for the instruction
# counts (both installed from Debian if missing),
# and node with the test authorization server for the OAuth rows (installed
# by scripts/oauth-deps.sh when missing; --oauth-pairs 0 skips the rows).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v strace >/dev/null; then
    echo "bench: installing strace (counts the bytes the adapter reads)" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq strace >/dev/null ||
        echo "bench: strace unavailable: the bytes-read figure will be missing" >&2
fi
# Instructions per call are counted under valgrind (cachegrind).
if ! command -v valgrind >/dev/null; then
    echo "bench: installing valgrind (counts instructions per call)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null 2>&1 ||
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null; } ||
        echo "bench: valgrind unavailable: the instruction counts will be missing" >&2
fi
# Heap allocations per call are counted on uprobes at libc's allocator.
if command -v perf >/dev/null; then
    libc=$(ldconfig -p | awk '/libc\.so\.6 .*x86-64/ {print $NF; exit}')
    for fn in malloc calloc realloc; do
        perf probe -q -x "$libc" "$fn" 2>/dev/null || true
    done
fi
scripts/oauth-deps.sh ||
    echo "bench: scripts/oauth-deps.sh failed: the OAuth rows cannot run (--oauth-pairs 0 skips them)" >&2
# The examples first, the adapter alone last: built together, the
# examples' dev-dependencies would add their features (rmcp's client,
# among others) to the adapter, and it would not be the binary that ships.
cargo build --profile dist --quiet --example hc-sim --example floor --example loadgen
cargo build --profile dist --quiet --bin herdr-core-mcp

echo "## machine"
echo
echo '```'
echo "\$ nproc"; nproc
echo "\$ free -h"; free -h
echo "\$ grep -m1 'model name' /proc/cpuinfo"; grep -m1 'model name' /proc/cpuinfo || true
echo "\$ uname -sr"; uname -sr
echo "\$ date -u"; date -u
echo '```'
echo
status=0
target/dist/examples/loadgen bench "$@" || status=$?
exit "$status"
