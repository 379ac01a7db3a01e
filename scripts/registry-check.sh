#!/usr/bin/env bash
# Publishes the npm and PyPI packages scripts/dist.sh wrote into real
# registries on 127.0.0.1 (verdaccio for npm, pypiserver for PyPI), then
# installs and runs them as a user would, in a home of its own (empty
# caches; only ~/.npmrc, uv.toml and pip.conf naming the local registries),
# with the simulator at hc's default socket:
#
# - `npx -y herdr-core-mcp --version`, `uvx herdr-core-mcp --version`,
#   `pip install herdr-core-mcp` in a fresh venv and `pipx run
#   herdr-core-mcp --version`: each prints what the binary prints, and each
#   installed the binary dist.sh built (npm: only the platform's package;
#   PyPI: the wheel, not the sdist); npm with ignore-scripts set;
# - the setup lines of the packages' README (init, inspect-core, allow,
#   doctor) through npx, then `serve` through `npx -y herdr-core-mcp` and
#   `uvx herdr-core-mcp` driven by the official Python SDK
#   (packaging/registry-check/run_launcher.py): nothing but protocol on
#   stdout, exit 0 when stdin closes, the start timed; tools listed,
#   terminals listed, a screen read, a prompt sent and answered, a send to
#   the unapproved shell refused;
# - the launcher passes exit codes and signals through, and says on stderr
#   (exit 1, nothing on stdout) which platforms exist and how to build from
#   source when the platform package is missing (`npm install --cpu=mips`)
#   or the platform has none.
#
# `--sdist` also builds the sdist with cargo (`pip install --no-binary`,
# a release build of several minutes; not in CI).
#
# The tools are pinned and installed project-locally, once, saying so:
# verdaccio (npm ci in packaging/registry-check, package-lock.json) and
# pypiserver, uv and pipx (PyPI, into target/registry-tools/venv, with
# packaging/registry-check/constraints.txt). Needs what scripts/test.sh
# installs (.interop/venv) and target/artifacts from scripts/dist.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

PYPISERVER_VERSION=2.4.2
UV_VERSION=0.13.9
PIPX_VERSION=1.18.4
NAME=herdr-core-mcp
VERSION="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
DIST="$ROOT/target/artifacts"
CHECK="$ROOT/packaging/registry-check"
TOOLS="$ROOT/target/registry-tools"
PY="$ROOT/.interop/venv/bin/python"
BIN="$ROOT/target/x86_64-unknown-linux-musl/dist/$NAME"
verdaccio="$CHECK/node_modules/.bin/verdaccio"

say() { echo "registry-check: $*" >&2; }
die() { say "FAIL $*"; exit 1; }
pass() { say "PASS $*"; }
sdist=0
[[ ${1:-} == --sdist ]] && sdist=1

[[ -f $DIST/SHA256SUMS && -x $BIN ]] || die "no target/artifacts: run scripts/dist.sh first"
[[ -x $PY ]] || die "no .interop/venv: run scripts/test.sh (or scripts/oauth-deps.sh) first"

# --- the tools, pinned, once ----------------------------------------------

if [[ "$("$verdaccio" --version 2>/dev/null)" != "v$(node -p 'require(process.argv[1]).packages["node_modules/verdaccio"].version' "$CHECK/package-lock.json")" ]]; then
  say "installing verdaccio into packaging/registry-check (npm ci, pinned, once)"
  (cd "$CHECK" && npm ci --silent --no-audit --no-fund) || die "npm ci failed in packaging/registry-check"
fi
if [[ "$("$TOOLS/venv/bin/pip" freeze 2>/dev/null | grep -Eic "^(pypiserver==$PYPISERVER_VERSION|uv==$UV_VERSION|pipx==$PIPX_VERSION)$")" != 3 ]]; then
  say "installing pypiserver $PYPISERVER_VERSION, uv $UV_VERSION and pipx $PIPX_VERSION into target/registry-tools (PyPI, once)"
  [[ -x $TOOLS/venv/bin/pip ]] || python3 -m venv "$TOOLS/venv" || die "python3 with venv is needed"
  "$TOOLS/venv/bin/pip" install --quiet --disable-pip-version-check -c "$CHECK/constraints.txt" \
    "pypiserver==$PYPISERVER_VERSION" "uv==$UV_VERSION" "pipx==$PIPX_VERSION" || die "pip could not install them"
fi
sim="$ROOT/target/release/examples/hc-sim"
if [[ ! -x $sim ]]; then
  sim="$ROOT/target/release/hc-sim"
  [[ -x $sim ]] || cargo build --release --quiet -p hc-sim --bin hc-sim
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/registry-check.XXXXXX")"
pids=()     # the registries and the simulator
serve_pid="" # a serve through the launcher, while one runs
cleanup() {
  local pid
  if [[ -n $serve_pid ]]; then
    pkill -KILL -P "$serve_pid" 2>/dev/null || true
    kill -KILL "$serve_pid" 2>/dev/null || true
  fi
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}" $serve_pid; do wait "$pid" 2>/dev/null || true; done
  if [[ -n ${REGISTRY_CHECK_KEEP:-} ]]; then say "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# A port that was free a moment ago: verdaccio and pypiserver take no
# listening socket from their parent.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_http() { # wait_http URL LOG: until URL answers
  local i
  for ((i = 0; i < 300; i++)); do
    curl -sf -o /dev/null "$1" && return 0
    sleep 0.1
  done
  cat "$2" >&2
  die "nothing answers at $1"
}
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# --- the registries -------------------------------------------------------

npm_port="$(free_port)"
npm_url="http://127.0.0.1:$npm_port/"
mkdir -p "$work/verdaccio"
cat >"$work/verdaccio/config.yaml" <<EOF
storage: $work/verdaccio/storage
auth:
  htpasswd:
    file: $work/verdaccio/htpasswd
uplinks: {}
packages:
  '**':
    access: \$all
    publish: \$authenticated
web:
  enable: false
log: { type: stdout, format: pretty, level: warn }
EOF
"$verdaccio" --config "$work/verdaccio/config.yaml" --listen "127.0.0.1:$npm_port" >"$work/verdaccio.log" 2>&1 &
pids+=($!)
pypi_port="$(free_port)"
pypi_url="http://127.0.0.1:$pypi_port/"
mkdir -p "$work/pypi"
"$TOOLS/venv/bin/pypi-server" run --interface 127.0.0.1 --port "$pypi_port" --authenticate . --passwords . \
  --disable-fallback "$work/pypi" >"$work/pypiserver.log" 2>&1 &
pids+=($!)
wait_http "$npm_url-/ping" "$work/verdaccio.log"
wait_http "${pypi_url}simple/" "$work/pypiserver.log"
pass "verdaccio $("$verdaccio" --version) at $npm_url, pypiserver $PYPISERVER_VERSION at $pypi_url"

# --- publishing, as a maintainer would ----------------------------------------

token="$(curl -sf -X PUT -H 'Content-Type: application/json' \
  -d '{"name": "release", "password": "release-check"}' "$npm_url-/user/org.couchdb.user:release" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])')" || die "verdaccio made no user"
printf '//127.0.0.1:%s/:_authToken=%s\n' "$npm_port" "$token" >"$work/publisher.npmrc"
for tgz in "$NAME-linux-x64-$VERSION.tgz" "$NAME-linux-arm64-$VERSION.tgz" "$NAME-$VERSION.tgz"; do
  npm publish --silent --ignore-scripts --access public --userconfig "$work/publisher.npmrc" \
    --registry "$npm_url" "$DIST/$tgz" >/dev/null 2>"$work/publish.log" ||
    { cat "$work/publish.log" >&2; die "npm publish $tgz"; }
done
pass "npm publish: $NAME, @$NAME/linux-x64, @$NAME/linux-arm64 $VERSION"
python_files=("$DIST/${NAME//-/_}-$VERSION"-*.whl "$DIST/${NAME//-/_}-$VERSION.tar.gz")
"$TOOLS/venv/bin/uv" publish --quiet --publish-url "$pypi_url" --username release --password release-check \
  "${python_files[@]}" 2>"$work/publish.log" || { cat "$work/publish.log" >&2; die "uv publish"; }
pass "uv publish: ${python_files[*]##*/}"

# --- a user's machine -------------------------------------------------------

# A home of its own: no cache, no tool, no config but the registries';
# hc's default socket under its own XDG_RUNTIME_DIR, the simulator there.
home="$work/home"
runtime="$work/run"
mkdir -p "$home/.config/uv" "$home/.config/pip" "$work/bin"
mkdir -m 700 "$runtime" "$runtime/herdr-core"
printf 'registry=%s\nignore-scripts=true\nfund=false\naudit=false\nupdate-notifier=false\n' "$npm_url" >"$home/.npmrc"
printf 'python-downloads = "never"\n\n[[index]]\nurl = "%ssimple/"\ndefault = true\n' "$pypi_url" >"$home/.config/uv/uv.toml"
printf '[global]\nindex-url = %ssimple/\ndisable-pip-version-check = true\n' "$pypi_url" >"$home/.config/pip/pip.conf"
ln -s "$TOOLS/venv/bin/uv" "$TOOLS/venv/bin/uvx" "$TOOLS/venv/bin/pipx" "$work/bin/"
python_dir="$(dirname "$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')")"
user_path="$work/bin:$(dirname "$(command -v node)"):$(dirname "$(command -v npm)"):$python_dir:/usr/bin:/bin"
user_env=(env -i HOME="$home" XDG_RUNTIME_DIR="$runtime" PATH="$user_path" LANG=C.UTF-8)
user() { "${user_env[@]}" "$@"; }

"$sim" --socket "$runtime/herdr-core/hc.sock" --agents 2 --shells 1 >"$work/sim.log" 2>&1 &
sim_pid=$!
pids+=("$sim_pid")
for ((i = 0; i < 100; i++)); do [[ -S $runtime/herdr-core/hc.sock ]] && break; sleep 0.1; done
[[ -S $runtime/herdr-core/hc.sock ]] || die "the simulator did not start: $(cat "$work/sim.log")"
sim_alive() { # the checks after this need the simulator
  kill -0 "$sim_pid" 2>/dev/null && return 0
  local code=0
  wait "$sim_pid" || code=$?
  die "the simulator stopped (exit status $code) before $1: $(cat "$work/sim.log")"
}

want_version="$("$BIN" --version)"
installed() { # installed WHAT OUT FILE: OUT is the binary's --version, FILE the binary dist.sh built
  [[ $2 == "$want_version" ]] || die "$1 printed: $2 (expected: $want_version)"
  cmp -s "$3" "$BIN" || die "$1 installed $3, which is not the binary dist.sh built"
}

started="$(date +%s%N)"
out="$(user npx -y "$NAME" --version 2>"$work/npx.err")" || { cat "$work/npx.err" >&2; die "npx -y $NAME --version"; }
cold="$(ms_since "$started")"
platforms="$(cd "$home/.npm/_npx" && ls -d -- */node_modules/@"$NAME"/* | sed 's|.*/node_modules/||' | tr '\n' ' ')"
[[ $platforms == "@$NAME/linux-x64 " ]] || die "npx installed the platform packages: $platforms"
installed "npx -y $NAME" "$out" "$(echo "$home"/.npm/_npx/*/node_modules/@"$NAME"/linux-x64/bin/"$NAME")"
started="$(date +%s%N)"
user npx -y "$NAME" --version >/dev/null
pass "npx -y $NAME --version: $(head -n 1 <<<"$out"), only @$NAME/linux-x64 installed; $cold ms from an empty cache, $(ms_since "$started") ms installed"

started="$(date +%s%N)"
out="$(user uvx "$NAME" --version 2>"$work/uvx.err")" || { cat "$work/uvx.err" >&2; die "uvx $NAME --version"; }
cold="$(ms_since "$started")"
grep -q "Built $NAME\|Building $NAME" "$work/uvx.err" && die "uvx built the sdist: $(cat "$work/uvx.err")"
installed "uvx $NAME" "$out" "$(find "$home/.cache/uv" -path "*/bin/$NAME" -type f | head -n 1)"
started="$(date +%s%N)"
user uvx "$NAME" --version >/dev/null
pass "uvx $NAME --version: the wheel's binary; $cold ms from an empty cache, $(ms_since "$started") ms installed"

user python3 -m venv "$work/venv"
user "$work/venv/bin/pip" install --quiet --no-cache-dir "$NAME" 2>"$work/pip.err" ||
  { cat "$work/pip.err" >&2; die "pip install $NAME"; }
installed "pip install $NAME" "$(user "$work/venv/bin/$NAME" --version)" "$work/venv/bin/$NAME"
wheel="$(user "$work/venv/bin/python" -c 'import importlib.metadata as m; print(m.distribution("herdr-core-mcp").read_text("WHEEL"))' | sed -n 's/^Tag: //p' | tr '\n' ' ')"
[[ $wheel == *"py3-none-manylinux_2_17_x86_64"* ]] || die "pip install $NAME did not take the wheel: $wheel"
pass "pip install $NAME in a fresh venv: the wheel ($wheel)"

# pipx hands `run` to `uv tool run` when it finds uv (as here), else
# makes a venv with pip: both ways. Its pip venvs upgrade pip from the
# index first, so the local one holds pip too (pinned, constraints.txt).
"$TOOLS/venv/bin/pip" download --quiet --disable-pip-version-check --no-deps -c "$CHECK/constraints.txt" \
  --dest "$work/pypi" pip || die "pip could not download pip"
out="$(user pipx run "$NAME" --version 2>"$work/pipx.err")" || { cat "$work/pipx.err" >&2; die "pipx run $NAME --version"; }
[[ $out == "$want_version" ]] || die "pipx run $NAME --version printed: $out"
out="$(user pipx run --backend pip "$NAME" --version 2>"$work/pipx.err")" ||
  { cat "$work/pipx.err" >&2; die "pipx run --backend pip $NAME --version"; }
installed "pipx run --backend pip $NAME" "$out" "$(find "$home/.cache/pipx" -path "*/bin/$NAME" -type f | head -n 1)"
pass "pipx run $NAME --version, through uv and with --backend pip: $(head -n 1 <<<"$out")"

# --- the launcher's edges ---------------------------------------------------

mkdir "$work/project"
(cd "$work/project" && user npm install --silent --cpu=mips "$NAME") >/dev/null 2>"$work/mips.err" ||
  { cat "$work/mips.err" >&2; die "npm install --cpu=mips $NAME"; }
launcher="$work/project/node_modules/.bin/$NAME"
[[ ! -e $work/project/node_modules/@$NAME ]] || die "npm install --cpu=mips installed a platform package"
code=0
out="$(user "$launcher" --version 2>"$work/missing.err")" || code=$?
[[ $code == 1 && -z $out ]] || die "without its platform package the launcher exited $code, stdout: $out"
for line in "@$NAME/linux-x64, the binary for linux-x64, is not installed" "linux-x64 and linux-arm64" \
  "cargo install --locked $NAME"; do
  grep -qF "$line" "$work/missing.err" || die "the launcher's message lacks \"$line\": $(cat "$work/missing.err")"
done
pass "npm install --cpu=mips, then the launcher: exit 1, nothing on stdout; stderr: $(head -n 1 "$work/missing.err")"
echo 'Object.defineProperty(process, "arch", { value: "mips" });' >"$work/mips.js"
code=0
out="$(user node --require "$work/mips.js" "$launcher" --version 2>"$work/mips.err")" || code=$?
[[ $code == 1 && -z $out ]] && grep -qF "no prebuilt binary for linux-mips" "$work/mips.err" &&
  grep -qF "cargo install --locked $NAME" "$work/mips.err" ||
  die "on linux-mips the launcher exited $code: $out $(cat "$work/mips.err")"
pass "on a platform without a package (linux-mips): exit 1; stderr: $(head -n 1 "$work/mips.err")"

launcher="$(echo "$home"/.npm/_npx/*/node_modules/.bin/"$NAME")"
code=0
user "$launcher" frobnicate >/dev/null 2>&1 || code=$?
want=0
"$BIN" frobnicate >/dev/null 2>&1 || want=$?
[[ $code == "$want" && $code != 0 ]] || die "the launcher exited $code where the binary exits $want"
# A serve through the launcher, its stdin held open, as a host keeps it.
serve_through_launcher() { # serve_through_launcher [ARGS]: serve ARGS
  mkfifo "$work/serve.in"
  exec {serve_fd}<>"$work/serve.in"
  : >"$work/serve.err"
  # env itself (then node, which it execs): $! is the launcher's pid.
  "${user_env[@]}" "$launcher" serve "$@" <"$work/serve.in" >/dev/null 2>>"$work/serve.err" &
  serve_pid=$!
  local deadline=$((SECONDS + 20))
  until grep -q 'serving MCP over stdio' "$work/serve.err"; do
    ((SECONDS < deadline)) || die "no serve through the launcher within 20 s: $(cat "$work/serve.err")"
    sleep 0.1 || true
  done
}
serve_done() { # waits for the launcher (10 s at most): its exit status in $code
  (sleep 10 && touch "$work/timed-out" && pkill -KILL -P "$serve_pid"; kill -KILL "$serve_pid") 2>/dev/null &
  local watchdog=$!
  code=0
  { wait "$serve_pid"; } 2>/dev/null || code=$? # no "Killed" line from bash
  kill "$watchdog" 2>/dev/null || true
  serve_pid=""
  exec {serve_fd}>&-
  rm "$work/serve.in"
  [[ ! -e $work/timed-out ]] || die "the launcher did not exit within 10 s: $(cat "$work/serve.err")"
}
sim_alive "the signals"
"$BIN" init --socket "$runtime/herdr-core/hc.sock" --config "$work/signals.json" >/dev/null
serve_through_launcher --config "$work/signals.json"
kill -TERM "$serve_pid"
serve_done
[[ $code == 0 ]] && grep -q 'SIGTERM: shutting down' "$work/serve.err" ||
  die "SIGTERM to the launcher: exit $code, $(cat "$work/serve.err")"
serve_through_launcher --config "$work/signals.json"
kill -KILL "$(pgrep -P "$serve_pid" -x "$NAME")"
serve_done
[[ $code == 137 ]] || die "the server killed by SIGKILL, the launcher exited $code"
pass "exit codes and signals pass through: 'frobnicate' exits $want; SIGTERM to the launcher stops the server (exit 0); the server killed, the launcher dies of SIGKILL too (137)"

# --- the packages' README, then serve as a host runs it ----------------------

user npx -y "$NAME" init >"$work/setup.out" 2>&1
user npx -y "$NAME" inspect-core >>"$work/setup.out" 2>&1
user npx -y "$NAME" allow --mode normal t1 >>"$work/setup.out" 2>&1
user npx -y "$NAME" doctor >>"$work/setup.out" 2>&1 || { cat "$work/setup.out" >&2; die "the README's setup through npx"; }
grep -q '^send mode normal' "$work/setup.out" && grep -Eq '^ok +approval +t1 ' "$work/setup.out" ||
  { cat "$work/setup.out" >&2; die "the README's setup through npx did not approve t1"; }
pass "the packages' README setup through npx: init, inspect-core, allow --mode normal t1, doctor all ok"
serve_through_launcher
for launch in "npx -y $NAME" "uvx $NAME"; do
  # shellcheck disable=SC2086 # the launcher's words
  out="$(user $launch reload 2>&1)" || die "$launch reload: $out"
  grep -q "^sent SIGHUP to serve" <<<"$out" || die "$launch reload did not reach the serve: $out"
done
kill -TERM "$serve_pid"
serve_done
[[ $code == 0 ]] || die "the serve of the default config exited $code"
pass "reload through npx and through uvx reaches a serve that npx started: $(grep "^sent SIGHUP" <<<"$out")"

config="$home/.config/$NAME/config.json"
sim_alive "the sessions"
for launch in "npx -y $NAME" "uvx $NAME" "$BIN"; do
  # shellcheck disable=SC2086 # the launcher's words
  ran="$(user "$PY" "$CHECK/run_launcher.py" --runs 5 -- $launch serve --config "$config" 2>"$work/run.err")" ||
    { cat "$work/run.err" >&2; die "serve through $launch"; }
  python3 - "$ran" "$ROOT/packaging/mcpb/manifest.json" <<'PY' || die "serve through $launch: $ran"
import json, sys
ran = json.loads(sys.argv[1])
# The tools the bundle's manifest declares (a test keeps it equal to the
# server's list).
tools = sorted(t["name"] for t in json.load(open(sys.argv[2]))["tools"])
assert ran["tools"] == tools, (ran, tools)
assert ran["sessions"] == ["t1", "t2", "t3"], ran
assert ran["sent"] == "sent" and ran["reply"].startswith("reply: hello through"), ran
assert ran["refused"] == "not_approved", ran
PY
  start="$(python3 -c 'import json, statistics, sys; s = json.loads(sys.argv[1])["start_ms"]; print(f"{min(s)}-{max(s)} ms (median {statistics.median(s):.0f})")' "$ran")"
  pass "serve through ${launch/#$ROOT\//}, by the Python SDK: protocol only on stdout, exit 0 on EOF; listed, read, sent, replied, refused t3; initialize answered in $start"
done

# --- the sdist, built with cargo (asked for) ---------------------------------

if [[ $sdist == 1 ]]; then
  say "building the sdist with cargo: pip install --no-binary $NAME (a release build: minutes)"
  # Its build backend, pinned as in dist.sh, beside it in the local index.
  maturin_version="$(sed -n 's/^MATURIN_VERSION=//p' scripts/dist.sh)"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --dest "$work/pypi" \
    "maturin==$maturin_version" || die "pip could not download maturin==$maturin_version"
  user python3 -m venv "$work/sdist-venv"
  started="$(date +%s%N)"
  user env PATH="$user_path:${CARGO_HOME:-$HOME/.cargo}/bin" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" \
    CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" "$work/sdist-venv/bin/pip" install --quiet --no-cache-dir \
    --no-binary "$NAME" "$NAME" >"$work/sdist.log" 2>&1 || { cat "$work/sdist.log" >&2; die "pip install --no-binary $NAME"; }
  out="$(user "$work/sdist-venv/bin/$NAME" --version)"
  [[ $out == "$want_version" ]] || die "the sdist's build printed: $out"
  pass "the sdist builds with cargo: pip install --no-binary $NAME in $(($(ms_since "$started") / 1000)) s; $(head -n 1 <<<"$out")"
fi
say "OK"
