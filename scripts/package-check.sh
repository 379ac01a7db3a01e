#!/usr/bin/env bash
# Checks that the crate publishes as `cargo install --locked herdr-core-mcp`
# installs it: `cargo package` (the file list, then a build of the packaged
# crate on its own, the simulator and the tests left out) and `cargo publish
# --dry-run` (everything but the upload; the package was built just before).
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "package-check: $*" >&2; }
allow=()
# A working tree with uncommitted changes is packaged as it is only when
# asked (CI runs on a clean clone).
[[ ${1:-} == --allow-dirty ]] && allow=(--allow-dirty)
say "cargo package: what is shipped"
cargo package --locked --list "${allow[@]}" | sed 's/^/  /' >&2
say "cargo package: building the packaged crate alone (a few minutes the first time)"
cargo package --locked "${allow[@]}"
say "cargo publish --dry-run"
cargo publish --locked --dry-run --no-verify "${allow[@]}"
say "OK"
