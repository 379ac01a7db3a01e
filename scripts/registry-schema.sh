#!/usr/bin/env bash
# Fetches the MCP registry's published server.json schema (2025-12-11) for
# the test that validates server.json: it comes byte for byte, with the
# registry's MIT licence, inside the PyPI package skillsaw (pinned, with the
# wheel's SHA-256), and lands in .interop/registry-schema/. Says one line
# when it fetches and nothing when the schema is there; fails with a
# message when pip or the download fails or a digest differs.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERSION=0.22.0
WHEEL="skillsaw-$VERSION-py3-none-any.whl"
WHEEL_SHA256=7c4b4f48961d9b1676831aeb65396ddc59a18efac39e505b0dfe500f4c055906
SCHEMA_SHA256=3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0
INNER=skillsaw/schemas/mcp_registry/v2025_12_11
DEST="$ROOT/.interop/registry-schema/2025-12-11"

say() { printf 'registry-schema: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

have() { [[ -f $DEST/server.schema.json ]] && sha256sum -c --status <<<"$SCHEMA_SHA256  $DEST/server.schema.json"; }
have && exit 0

command -v python3 >/dev/null || die "python3 is required but not on PATH"
say "fetching the MCP registry's server.json schema 2025-12-11 (PyPI skillsaw==$VERSION)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --disable-pip-version-check --no-deps \
  "skillsaw==$VERSION" -d "$tmp" || die "pip could not download skillsaw==$VERSION"
sha256sum -c --status <<<"$WHEEL_SHA256  $tmp/$WHEEL" || die "$WHEEL is not the pinned file (SHA-256 differs)"
python3 - "$tmp/$WHEEL" "$INNER" "$tmp/out" <<'PY' || die "cannot unpack $INNER from $WHEEL"
import sys, zipfile
wheel, inner, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    for name in ("server.schema.json", "LICENSE", "SCHEMA-SOURCE.md"):
        z.extract(f"{inner}/{name}", out)
PY
mkdir -p "$DEST"
cp "$tmp/out/$INNER/"{server.schema.json,LICENSE,SCHEMA-SOURCE.md} "$DEST/"
have || die "the unpacked schema is not the pinned one (SHA-256 differs)"
