#!/usr/bin/env bash
# Checks what scripts/dist.sh left in target/artifacts/, as someone who
# downloads it would, then runs the README's and the docs' walkthrough with
# the unpacked x86_64 binary:
#
# - SHA256SUMS matches every archive and bundle;
# - each archive unpacks, in a clean folder, into one folder holding the
#   binary, LICENSE, README.md, the man page and three completions; `file`
#   shows both binaries static, for their architecture, and `ldd` has no
#   library for the x86_64 one (the aarch64 one cannot run here);
# - each bundle unpacks (the MCP Bundle CLI), its manifest validates and
#   holds its platform's binary; the x86_64 bundle's command, filled in as a
#   host fills it, is run once against the simulator by the official Python
#   SDK (packaging/mcpb/run_bundle.py): it lists the tools and prompts the
#   manifest names and the simulator's terminals;
# - each npm package unpacks into its package.json (name, version, os and
#   cpu, the launcher's bin and exact optionalDependencies, no install
#   script) and its files; each platform package's binary is executable,
#   static, for its cpu, and the archive's binary byte for byte;
# - each wheel is tagged py3-none manylinux_2_17 (manylinux2014) and
#   musllinux_1_2 for its architecture and holds that binary as its one
#   executable script; the sdist holds pyproject.toml and the crate;
# - target/artifacts/server.json is valid against the MCP registry's schema,
#   names the bundles' digests, and is the repository's server.json but
#   for them.
#
# Needs what scripts/test.sh installs (.interop/venv, the registry schema)
# and the simulator built (target/release/examples/hc-sim).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
DIST="$ROOT/target/artifacts"
NAME=herdr-core-mcp
VERSION="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
PY="$ROOT/.interop/venv/bin/python"
SIM="$ROOT/target/release/examples/hc-sim"
mcpb="$ROOT/packaging/mcpb/cli/node_modules/.bin/mcpb"

say() { echo "dist-check: $*" >&2; }
die() { say "FAIL $*"; exit 1; }
pass() { say "PASS $*"; }

[[ -f $DIST/SHA256SUMS ]] || die "no target/artifacts/SHA256SUMS: run scripts/dist.sh first"
[[ -x $PY ]] || die "no .interop/venv: run scripts/test.sh (or scripts/oauth-deps.sh) first"
[[ -x $SIM ]] || cargo build --release --quiet --example hc-sim

work="$(mktemp -d "${TMPDIR:-/tmp}/dist-check.XXXXXX")"
sim_pid=""
cleanup() {
  [[ -n $sim_pid ]] && kill "$sim_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

(cd "$DIST" && sha256sum --quiet -c SHA256SUMS) || die "SHA256SUMS does not match target/artifacts"
[[ $(wc -l <"$DIST/SHA256SUMS") -eq 10 ]] ||
  die "SHA256SUMS should name two archives, two bundles, three npm packages, two wheels and the sdist"
pass "SHA256SUMS matches the two archives, the two bundles, the three npm packages, the two wheels and the sdist"

# --- the archives ---------------------------------------------------------

for pair in x86_64-unknown-linux-musl:x86-64 aarch64-unknown-linux-musl:"ARM aarch64"; do
  target="${pair%%:*}" arch="${pair#*:}"
  dir="$NAME-v$VERSION-$target"
  mkdir "$work/$target"
  tar -C "$work/$target" -xzf "$DIST/$dir.tar.gz"
  [[ $(ls "$work/$target") == "$dir" ]] || die "$dir.tar.gz does not unpack into one folder $dir"
  got="$(cd "$work/$target/$dir" && find . -type f | LC_ALL=C sort | tr '\n' ' ')"
  want="./LICENSE ./README.md ./completions/_$NAME ./completions/$NAME.bash ./completions/$NAME.fish ./$NAME ./$NAME.1 "
  [[ $got == "$want" ]] || die "$dir.tar.gz holds: $got (expected: $want)"
  described="$(file -b "$work/$target/$dir/$NAME")"
  [[ $described == *"$arch"* ]] || die "$target binary is not $arch: $described"
  [[ $described == *"statically linked"* || $described == *"static-pie linked"* ]] ||
    die "$target binary is not static: $described"
  pass "$dir.tar.gz: binary, LICENSE, README, man page, completions; $described"
done
bin="$work/x86_64-unknown-linux-musl/$NAME-v$VERSION-x86_64-unknown-linux-musl/$NAME"
if ldd "$bin" >"$work/ldd.out" 2>&1; then
  grep -q "statically linked" "$work/ldd.out" || die "ldd lists libraries: $(cat "$work/ldd.out")"
fi
pass "ldd: $(tr -s ' \t\n' ' ' <"$work/ldd.out")"
"$bin" --version | grep -q "^$NAME $VERSION" || die "the unpacked binary does not say it is $VERSION"
pass "the unpacked x86_64 binary runs: $("$bin" --version | head -n 1)"

# --- the bundles ----------------------------------------------------------

for pair in linux-x64:x86-64 linux-arm64:"ARM aarch64"; do
  platform="${pair%%:*}" arch="${pair#*:}"
  bundle="$DIST/$NAME-$VERSION-$platform.mcpb"
  "$mcpb" unpack "$bundle" "$work/bundle-$platform" >/dev/null || die "cannot unpack $bundle"
  "$mcpb" validate "$work/bundle-$platform/manifest.json" >/dev/null ||
    die "the manifest in $bundle does not validate"
  cmp -s "$work/bundle-$platform/manifest.json" packaging/mcpb/manifest.json ||
    die "the manifest in $bundle is not packaging/mcpb/manifest.json"
  [[ -x $work/bundle-$platform/server/$NAME ]] || die "$bundle has no executable server/$NAME"
  described="$(file -b "$work/bundle-$platform/server/$NAME")"
  [[ $described == *"$arch"* ]] || die "the binary in $bundle is not $arch: $described"
  pass "$(basename "$bundle"): manifest valid, $arch binary inside"
done

# --- the npm packages, the wheels and the sdist ------------------------------

for pair in x86_64-unknown-linux-musl:linux-x64:x64:x86_64:x86-64 aarch64-unknown-linux-musl:linux-arm64:arm64:aarch64:"ARM aarch64"; do
  IFS=: read -r target platform cpu arch described_arch <<<"$pair"
  archived="$work/$target/$NAME-v$VERSION-$target/$NAME"
  tgz="$NAME-$platform-$VERSION.tgz"
  mkdir "$work/npm-$platform"
  tar -C "$work/npm-$platform" -xzf "$DIST/$tgz"
  got="$(cd "$work/npm-$platform/package" && find . -type f | LC_ALL=C sort | tr '\n' ' ')"
  [[ $got == "./LICENSE ./bin/$NAME ./package.json " ]] || die "$tgz holds: $got"
  "$PY" - "$work/npm-$platform/package/package.json" "@$NAME/$platform" "$VERSION" "$cpu" <<'PY' || die "$tgz: package.json"
import json, sys
package, name, version, cpu = json.load(open(sys.argv[1])), *sys.argv[2:]
assert (package["name"], package["version"]) == (name, version), package
assert package["os"] == ["linux"] and package["cpu"] == [cpu], package
assert "scripts" not in package, package
PY
  packed="$work/npm-$platform/package/bin/$NAME"
  [[ -x $packed ]] || die "$tgz: bin/$NAME is not executable"
  described="$(file -b "$packed")"
  [[ $described == *"$described_arch"* && $described == *"statically linked"* ]] || die "$tgz: $described"
  cmp -s "$packed" "$archived" || die "$tgz: bin/$NAME is not the archive's binary"
  pass "$tgz: @$NAME/$platform $VERSION, os linux, cpu $cpu, no scripts; the archive's static binary, mode $(stat -c %a "$packed")"

  wheel="$(cd "$DIST" && echo "${NAME//-/_}-$VERSION-py3-none-"*"_$arch.whl")"
  [[ -f $DIST/$wheel ]] || die "no wheel for $arch"
  "$PY" - "$DIST/$wheel" "$archived" "$VERSION" "$arch" <<'PY' || die "$wheel"
import sys, zipfile
wheel, archived, version, arch = sys.argv[1:]
z = zipfile.ZipFile(wheel)
name = "herdr_core_mcp"
tags = sorted(l.split(": ")[1] for l in z.read(f"{name}-{version}.dist-info/WHEEL").decode().splitlines()
              if l.startswith("Tag: "))
want = sorted(f"py3-none-{t}_{arch}" for t in ("manylinux2014", "manylinux_2_17", "musllinux_1_2"))
assert tags == want, tags
script = f"{name}-{version}.data/scripts/herdr-core-mcp"
executables = [i.filename for i in z.infolist() if (i.external_attr >> 16) & 0o111]
assert executables == [script], executables
assert z.read(script) == open(archived, "rb").read(), "the wheel's binary is not the archive's"
metadata = z.read(f"{name}-{version}.dist-info/METADATA").decode()
assert f"\nVersion: {version}\n" in metadata, metadata[:300]
assert "mcp-name: io.github.herdr-core-mcp/herdr-core-mcp" in metadata
PY
  pass "$wheel: tags manylinux_2_17 (manylinux2014) and musllinux_1_2, the archive's binary as its one script"
done
mkdir "$work/npm-launcher"
tar -C "$work/npm-launcher" -xzf "$DIST/$NAME-$VERSION.tgz"
got="$(cd "$work/npm-launcher/package" && find . -type f | LC_ALL=C sort | tr '\n' ' ')"
[[ $got == "./LICENSE ./README.md ./bin/$NAME.js ./package.json " ]] || die "$NAME-$VERSION.tgz holds: $got"
"$PY" - "$work/npm-launcher/package/package.json" "$VERSION" <<'PY' || die "$NAME-$VERSION.tgz: package.json"
import json, sys
package, version = json.load(open(sys.argv[1])), sys.argv[2]
assert (package["name"], package["version"]) == ("herdr-core-mcp", version), package
assert package["bin"] == {"herdr-core-mcp": "bin/herdr-core-mcp.js"}, package
assert package["optionalDependencies"] == {f"@herdr-core-mcp/linux-{c}": version for c in ("arm64", "x64")}, package
assert package["mcpName"] == "io.github.herdr-core-mcp/herdr-core-mcp", package
assert "scripts" not in package and "dependencies" not in package, package
PY
node --check "$work/npm-launcher/package/bin/$NAME.js" || die "the launcher does not parse"
pass "$NAME-$VERSION.tgz: the launcher, no dependencies, no scripts; optionalDependencies both platforms at $VERSION exactly"
sdist="${NAME//-/_}-$VERSION.tar.gz"
tar -C "$work" -xzf "$DIST/$sdist"
for f in PKG-INFO pyproject.toml Cargo.toml Cargo.lock src/main.rs packaging/package-readme.md; do
  [[ -f $work/${NAME//-/_}-$VERSION/$f ]] || die "$sdist has no $f"
done
grep -qx "Version: $VERSION" "$work/${NAME//-/_}-$VERSION/PKG-INFO" || die "$sdist: PKG-INFO is not version $VERSION"
pass "$sdist: PKG-INFO $VERSION, pyproject.toml, Cargo.toml, Cargo.lock and the sources"

# The x64 bundle's command, once, against the simulator, as a host runs it.
mkdir -m 700 "$work/run"
"$SIM" --socket "$work/run/hc.sock" --agents 1 --shells 1 >"$work/sim.log" 2>&1 &
sim_pid=$!
for ((i = 0; i < 100; i++)); do [[ -S $work/run/hc.sock ]] && break; sleep 0.1; done
[[ -S $work/run/hc.sock ]] || die "the simulator did not start: $(cat "$work/sim.log")"
"$bin" init --socket "$work/run/hc.sock" --config "$work/config.json" >/dev/null
"$PY" packaging/mcpb/run_bundle.py "$work/bundle-linux-x64" "$work/config.json" >"$work/bundle.json" ||
  die "the bundle's command did not run"
"$PY" - "$work/bundle.json" packaging/mcpb/manifest.json "$work/bundle-linux-x64" <<'PY' || die "the bundle's run"
import json, sys
ran = json.load(open(sys.argv[1]))
manifest = json.load(open(sys.argv[2]))
want_command = [f"{sys.argv[3]}/server/herdr-core-mcp", "serve", "--config"]
assert ran["command"][:3] == want_command, ran["command"]
assert ran["tools"] == [t["name"] for t in manifest["tools"]], ran["tools"]
assert ran["prompts"] == [p["name"] for p in manifest["prompts"]], ran["prompts"]
sessions = [s["address"] for s in ran["sessions"]["sessions"]]
assert sessions == ["t1", "t2"], sessions
PY
pass "the x64 bundle's command ran once: tools and prompts as its manifest says, terminals t1 and t2"

# --- server.json ----------------------------------------------------------

"$PY" - "$DIST/server.json" server.json .interop/registry-schema/2025-12-11/server.schema.json "$DIST" <<'PY' || die "target/artifacts/server.json"
import hashlib, json, pathlib, sys
import jsonschema
built, committed, schema = (json.load(open(p)) for p in sys.argv[1:4])
dist = pathlib.Path(sys.argv[4])
jsonschema.validate(built, schema)
bundles = [p for p in built["packages"] if p["registryType"] == "mcpb"]
assert len(bundles) == 2, bundles
for p in bundles:
    name = p["identifier"].rsplit("/", 1)[1]
    assert p["fileSha256"] == hashlib.sha256((dist / name).read_bytes()).hexdigest(), name
for p in built["packages"] + committed["packages"]:
    p.pop("fileSha256", None)
assert built == committed, "target/artifacts/server.json differs from server.json beyond the digests"
PY
pass "target/artifacts/server.json is valid for the registry and names both bundles' SHA-256"

# --- the walkthrough with the unpacked binary -------------------------------

say "running scripts/walkthrough.sh with the unpacked x86_64 binary"
WALKTHROUGH_BIN="$bin" scripts/walkthrough.sh
