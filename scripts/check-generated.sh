#!/usr/bin/env bash
# The files the adapter generates or ships, checked by the programs that
# read them (tests/ops/generated_files.rs): the bash completion run in bash as
# readline runs it, the zsh and fish ones in zsh and fish, the man page
# through `groff -ww` and `mandoc -T lint`, and the systemd units through
# `systemd-analyze --user verify`.
#
# Installs whichever of those programs is missing (apt-get, as root or with
# sudo; the systemd package also brings the pages the man page's SEE ALSO
# names), then runs those tests. Without the programs the tests fail rather
# than skip, so CI runs this before scripts/test.sh.
# Usage: scripts/check-generated.sh [--install-only | extra nextest/cargo test args]
# (scripts/test.sh runs it with --install-only, then the whole suite.)
set -euo pipefail
cd "$(dirname "$0")/.."

# program -> Debian package
declare -A packages=(
    [bash]=bash
    [zsh]=zsh
    [fish]=fish
    [groff]=groff-base
    [mandoc]=mandoc
    [systemd-analyze]=systemd
)
missing=()
for program in "${!packages[@]}"; do
    command -v "$program" >/dev/null 2>&1 || missing+=("${packages[$program]}")
done
if ((${#missing[@]})); then
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "check-generated: missing ${missing[*]}, and no apt-get to install them with" >&2
        exit 1
    fi
    as_root=()
    if [ "$(id -u)" -ne 0 ]; then
        as_root=(sudo)
    fi
    echo "check-generated: installing ${missing[*]}"
    "${as_root[@]}" apt-get update -qq
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
for program in "${!packages[@]}"; do
    command -v "$program" >/dev/null 2>&1 || {
        echo "check-generated: $program is still missing after installing ${packages[$program]}" >&2
        exit 1
    }
done

if [ "${1:-}" = "--install-only" ]; then
    exit 0
fi

# The same features (and so the same build) as scripts/test.sh.
features=(--features herdr-core-mcp/fuzzing)
if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --workspace --no-fail-fast "${features[@]}" generated_files "$@"
else
    cargo test --no-fail-fast "${features[@]}" --test tests generated_files "$@"
fi
