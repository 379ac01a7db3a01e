#!/usr/bin/env bash
# Builds what a release ships, into target/artifacts/:
#
# - herdr-core-mcp-vVERSION-TARGET.tar.gz for x86_64 and aarch64 Linux
#   (static, musl): the binary, LICENSE, README.md, the man page and the
#   bash, zsh and fish completions, under one folder of the same name (the
#   names `cargo binstall` looks for, [package.metadata.binstall]);
# - herdr-core-mcp-VERSION-linux-x64.mcpb and -linux-arm64.mcpb: MCP
#   Bundles (packaging/mcpb/manifest.json with that platform's binary),
#   packed and validated by the MCP Bundle CLI;
# - the npm packages (`npm pack`, packaging/npm/): herdr-core-mcp-VERSION.tgz,
#   the launcher `npx -y herdr-core-mcp` runs, and
#   herdr-core-mcp-linux-x64-VERSION.tgz and -linux-arm64-VERSION.tgz
#   (@herdr-core-mcp/linux-x64 and /linux-arm64), each with its binary;
# - the PyPI packages (maturin, pyproject.toml): one wheel per target,
#   tagged manylinux_2_17 and musllinux_1_2 (the binary is static, so glibc
#   and musl systems both take it), and the sdist, which builds with cargo;
# - SHA256SUMS of all of these, and server.json: the repository's, with the
#   SHA-256 of each bundle just built (the file to publish with them).
#
# Each binary is built once, by maturin (profile dist, Zig as the linker and
# C compiler), which writes the wheel and leaves the binary where cargo puts
# it; the archives, the bundles and the npm packages take that same file.
#
# The tools are pinned and installed project-locally, once, saying so:
# the two musl targets (rustup), maturin and Zig (PyPI's maturin and
# ziglang, in target/dist-tools/venv), and @anthropic-ai/mcpb (npm,
# packaging/mcpb/cli/package-lock.json). macOS is not built here:
# docs/operations.md, "Installing a release archive", gives the one command
# that builds it there. scripts/dist-check.sh checks what this made, and
# scripts/registry-check.sh installs the npm and PyPI packages from local
# registries.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

MATURIN_VERSION=1.16.0
ZIGLANG_VERSION=0.14.1
TARGETS=(x86_64-unknown-linux-musl aarch64-unknown-linux-musl)
TOOLS="$ROOT/target/dist-tools"
OUT="$ROOT/target/artifacts"
NAME=herdr-core-mcp
VERSION="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"

say() { echo "dist: $*" >&2; }
die() { say "$*"; exit 1; }

# --- the tools, pinned, once ----------------------------------------------

for target in "${TARGETS[@]}"; do
  if ! rustup target list --installed | grep -qx "$target"; then
    say "adding the Rust target $target (rustup, once)"
    rustup target add "$target" >/dev/null || die "rustup could not add $target"
  fi
done
if [[ "$("$TOOLS/venv/bin/python" -m ziglang version 2>/dev/null)" != "$ZIGLANG_VERSION" ||
  "$("$TOOLS/venv/bin/maturin" --version 2>/dev/null)" != "maturin $MATURIN_VERSION" ]]; then
  say "installing maturin $MATURIN_VERSION and Zig $ZIGLANG_VERSION into target/dist-tools (PyPI, once)"
  [[ -x $TOOLS/venv/bin/pip ]] || python3 -m venv "$TOOLS/venv" || die "python3 with venv is needed"
  "$TOOLS/venv/bin/pip" install --quiet --disable-pip-version-check \
    "maturin==$MATURIN_VERSION" "ziglang==$ZIGLANG_VERSION" ||
    die "cannot install maturin==$MATURIN_VERSION and ziglang==$ZIGLANG_VERSION"
fi
mcpb="$ROOT/packaging/mcpb/cli/node_modules/.bin/mcpb"
if [[ ! -x $mcpb ]]; then
  say "installing the MCP Bundle CLI (npm ci in packaging/mcpb/cli, pinned, once)"
  (cd packaging/mcpb/cli && npm ci --silent --no-audit --no-fund) || die "npm ci failed in packaging/mcpb/cli"
fi
# maturin finds Zig as `python3 -m ziglang` of the venv.
export PATH="$TOOLS/venv/bin:$PATH"

# Every package says Cargo.toml's version (pyproject.toml takes it from
# there), checked before anything is built.
python3 - "$VERSION" packaging/mcpb/manifest.json packaging/npm/*/package.json <<'PY' || exit 1
import json, sys
version = sys.argv[1]
for name in sys.argv[2:]:
    package = json.load(open(name))
    pins = {"version": package["version"], **package.get("optionalDependencies", {})}
    for what, got in pins.items():
        if got != version:
            sys.exit(f"dist: {name}: {what} is {got}, but Cargo.toml says {version}")
PY

# --- the binaries, the wheels and the sdist ---------------------------------

rm -rf "$OUT"
mkdir -p "$OUT"
wheel_name="${NAME//-/_}"
for target in "${TARGETS[@]}"; do
  say "building $NAME $VERSION for $target and its wheel (maturin, profile dist: fat LTO; a few minutes)"
  maturin build --quiet --locked --zig --target "$target" --profile dist \
    --compatibility manylinux2014 musllinux_1_2 --out "$OUT" >"$OUT/maturin-$target.log" 2>&1 ||
    { cat "$OUT/maturin-$target.log" >&2; die "maturin build failed for $target"; }
  rm "$OUT/maturin-$target.log"
done
maturin sdist --out "$OUT" >"$OUT/maturin-sdist.log" 2>&1 ||
  { cat "$OUT/maturin-sdist.log" >&2; die "maturin sdist failed"; }
rm "$OUT/maturin-sdist.log"
say "wrote the wheels and the sdist: $(cd "$OUT" && echo "$wheel_name"-*)"
host_bin="target/x86_64-unknown-linux-musl/dist/$NAME"

# --- the archives -----------------------------------------------------------

# Reproducible tar files: sorted names, one owner, the commit's time.
epoch="$(git log -1 --format=%ct 2>/dev/null || echo 0)"
pack_tar() { # pack_tar FOLDER (under $OUT/stage)
  tar -C "$OUT/stage" --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner \
    -cf - "$1" | gzip -9n >"$OUT/$1.tar.gz"
}
for target in "${TARGETS[@]}"; do
  dir="$NAME-v$VERSION-$target"
  stage="$OUT/stage/$dir"
  mkdir -p "$stage/completions"
  install -m 755 "target/$target/dist/$NAME" "$stage/$NAME"
  install -m 644 LICENSE README.md "$stage/"
  # Generated by the x86_64 build: the command line is the same on both.
  "$host_bin" man >"$stage/$NAME.1"
  "$host_bin" completions bash >"$stage/completions/$NAME.bash"
  "$host_bin" completions zsh >"$stage/completions/_$NAME"
  "$host_bin" completions fish >"$stage/completions/$NAME.fish"
  pack_tar "$dir"
  say "wrote target/artifacts/$dir.tar.gz"
done

# --- the bundles ------------------------------------------------------------

manifest_version="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' packaging/mcpb/manifest.json)"
[[ $manifest_version == "$VERSION" ]] ||
  die "packaging/mcpb/manifest.json says version $manifest_version, Cargo.toml $VERSION"
"$mcpb" validate packaging/mcpb/manifest.json >/dev/null || die "the bundle manifest does not validate"
for pair in x86_64-unknown-linux-musl:linux-x64 aarch64-unknown-linux-musl:linux-arm64; do
  target="${pair%%:*}" platform="${pair#*:}"
  stage="$OUT/stage/bundle-$platform"
  mkdir -p "$stage/server"
  cp packaging/mcpb/manifest.json LICENSE README.md "$stage/"
  install -m 755 "target/$target/dist/$NAME" "$stage/server/$NAME"
  find "$stage" -exec touch -h -d "@$epoch" {} +
  "$mcpb" pack "$stage" "$OUT/$NAME-$VERSION-$platform.mcpb" >"$OUT/stage/pack-$platform.log" 2>&1 ||
    { cat "$OUT/stage/pack-$platform.log" >&2; die "mcpb pack failed for $platform"; }
  say "wrote target/artifacts/$NAME-$VERSION-$platform.mcpb"
done

# --- the npm packages -------------------------------------------------------

# npm pack writes fixed times and modes; the binary keeps its 0755.
npm_pack() { # npm_pack STAGE: the .tgz into $OUT
  (cd "$1" && npm pack --silent --ignore-scripts --pack-destination "$OUT" >/dev/null) ||
    die "npm pack failed in $1"
}
for pair in x86_64-unknown-linux-musl:linux-x64 aarch64-unknown-linux-musl:linux-arm64; do
  target="${pair%%:*}" platform="${pair#*:}"
  stage="$OUT/stage/npm-$platform"
  mkdir -p "$stage/bin"
  cp "packaging/npm/$platform/package.json" LICENSE "$stage/"
  install -m 755 "target/$target/dist/$NAME" "$stage/bin/$NAME"
  npm_pack "$stage"
  say "wrote target/artifacts/$NAME-$platform-$VERSION.tgz (@$NAME/$platform)"
done
stage="$OUT/stage/npm-launcher"
mkdir -p "$stage"
cp -R "packaging/npm/$NAME/." "$stage/"
cp LICENSE "$stage/"
cp packaging/package-readme.md "$stage/README.md"
npm_pack "$stage"
say "wrote target/artifacts/$NAME-$VERSION.tgz (the launcher)"

# --- checksums and the server.json to publish -------------------------------

(cd "$OUT" && sha256sum -- *.tar.gz *.mcpb *.tgz *.whl >SHA256SUMS)
python3 - "$OUT" "$VERSION" <<'PY' || die "cannot write target/artifacts/server.json"
import hashlib, json, pathlib, sys
out, version = pathlib.Path(sys.argv[1]), sys.argv[2]
server = json.loads(pathlib.Path("server.json").read_text())
for package in server["packages"]:
    if package["registryType"] != "mcpb":
        continue
    name = package["identifier"].rsplit("/", 1)[1]
    bundle = out / name
    if not bundle.is_file():
        sys.exit(f"server.json names {name}, which was not built (version {version}?)")
    package["fileSha256"] = hashlib.sha256(bundle.read_bytes()).hexdigest()
(out / "server.json").write_text(json.dumps(server, indent=2) + "\n")
PY
rm -rf "$OUT/stage"
say "wrote target/artifacts/SHA256SUMS and target/artifacts/server.json"
(cd "$OUT" && ls -l --time-style=+ -- *.tar.gz *.mcpb *.tgz *.whl | awk '{print "dist:   " $5 "  " $NF}' >&2)
