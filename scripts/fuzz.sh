#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for SECONDS_PER_TARGET seconds each
# (default 120), one after the other, and prints the executions and findings
# of each. Not part of CI.
#
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   FUZZ_SANITIZER=none|address   (default none: the code under test is safe
#                                  Rust; address is slower, for a deeper run)
#   FUZZ_JOBS=N                   (parallel libFuzzer workers per target, default 1)
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`) and a C++ compiler. cargo fuzz
# passes nightly-only compiler flags; on a stable toolchain this script sets
# RUSTC_BOOTSTRAP=1 so that stable rustc accepts them (checked with stable
# 1.95, `-s none` and `-s address`).
#
# The committed seeds in fuzz/corpus/<target>/ are only read: new inputs go
# to target/fuzz-corpus/<target>/, crashes to fuzz/artifacts/<target>/.
# A crash file replays with: cargo fuzz run -s none <target> <file>; once
# fixed, copy it into fuzz/corpus/<target>/ so tests/core/fuzz_corpus.rs replays
# it on every test run.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-120}"
shift || true
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ]; then
    echo "fuzz.sh: SECONDS_PER_TARGET must be a positive integer, got '$seconds'" >&2
    exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: cargo fuzz is not installed: run 'cargo install cargo-fuzz'" >&2
    exit 2
fi
if ! rustc -V | grep -q nightly; then
    export RUSTC_BOOTSTRAP=1
fi
sanitizer="${FUZZ_SANITIZER:-none}"
jobs="${FUZZ_JOBS:-1}"

if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cd fuzz && cargo fuzz list)
fi

echo "== building the fuzz targets (sanitizer $sanitizer)"
(cd fuzz && cargo fuzz build -s "$sanitizer") 2>&1 | tail -n 1

parallel=()
if [ "$jobs" -gt 1 ]; then
    parallel=(-jobs="$jobs" -workers="$jobs")
fi
summary=()
failed=0
for target in "${targets[@]}"; do
    scratch="target/fuzz-corpus/$target"
    artifacts="fuzz/artifacts/$target"
    log="target/fuzz-corpus/$target.log"
    mkdir -p "$scratch" "$artifacts"
    before=$(find "$artifacts" -type f | wc -l)
    echo "== $target: ${seconds}s, sanitizer $sanitizer, $jobs job(s)"
    status=0
    (cd fuzz && cargo fuzz run -s "$sanitizer" "$target" \
        "../$scratch" "corpus/$target" -- \
        -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
        "${parallel[@]}") >"$log" 2>&1 || status=$?
    # With -jobs the workers log to fuzz/fuzz-N.log.
    runs=$(awk '/stat::number_of_executed_units/ {s += $2} END {print s + 0}' \
        "$log" $(find fuzz -maxdepth 1 -name 'fuzz-*.log'))
    rm -f fuzz/fuzz-*.log
    found=$(( $(find "$artifacts" -type f | wc -l) - before ))
    corpus=$(find "$scratch" -type f | wc -l)
    line="$target: $runs executions in ${seconds}s (~$(( runs / seconds ))/s), corpus $corpus, new crash artifacts $found, exit $status"
    echo "$line"
    summary+=("$line")
    if [ "$status" -ne 0 ] || [ "$found" -ne 0 ]; then
        failed=1
        echo "   see $log and $artifacts/"
        grep -E '(panicked at|==[0-9]+== ERROR|SUMMARY|Test unit written)' "$log" | head -n 5 || true
    fi
done

echo "== summary"
printf '%s\n' "${summary[@]}"
exit "$failed"
