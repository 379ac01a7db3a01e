#!/usr/bin/env bash
# Runs the documentation's example commands exactly as written, so README.md,
# AGENT-HANDOFF.md and docs/ cannot drift from what works. CI runs this after
# scripts/test.sh (which installs zsh, fish, groff, mandoc and
# systemd-analyze). Needs node/npx (the MCP Inspector CLI is fetched by npx
# from the npm registry) and openssl.
#
# Which shell blocks (fences opened with sh, bash or shell) it runs, in
# README.md, AGENT-HANDOFF.md and docs/*.md (also in docs/architecture.md,
# "Example commands in these pages"):
#
# - README.md's by-hand walkthrough, the block between
#   <!-- walkthrough:begin --> and <!-- walkthrough:end -->. It starts its
#   own simulator and is then checked against what its comments promise:
#   init writes the config, allow --mode normal, doctor all ok, two prompts
#   in a row to the same agent both sent, both replies on the screen.
# - A block whose preceding paragraph is the line <!-- walkthrough:run -->.
#   It runs with bash -euo pipefail from the repository root and must exit
#   0.
# - A block whose preceding paragraph starts with "*Needs " (for example
#   "*Needs systemd: ...*") is not run; that visible line says what it
#   needs and why.
#
# Any other shell block fails the run, except README.md's opening lines (the
# blocks above its walkthrough: the two scripts a newcomer runs first).
#
# Each page runs in a world of its own, so that nothing depends on the
# caller's account:
#
# - HOME is an empty scratch directory, so `~` is never the caller's home;
#   XDG_CONFIG_HOME and the other XDG base directories, HERDR_MCP_TOKEN,
#   HERDR_MCP_READ_TOKEN and RUST_LOG are unset. cargo, rustup and npm keep
#   the caller's homes (CARGO_HOME, RUSTUP_HOME, npm's cache and settings),
#   so nothing is fetched or built twice.
# - XDG_RUNTIME_DIR is a scratch directory, and the bundled simulator (two
#   agents, t1 and t2, and a shell, t3) listens at hc's default socket,
#   $XDG_RUNTIME_DIR/herdr-core/hc.sock, in place of a real hc.
# - PATH starts with ~/.local/bin (where the pages install the binary), then
#   target/release.
# - The page's marked blocks run in order, so each sees what the earlier
#   ones did, as for an operator following the page. Once the page has
#   written the default config (~/.config/herdr-core-mcp/config.json), a
#   `herdr-core-mcp serve` over stdio stands in for the MCP host that would
#   run it, so `reload` and `status` find a serve.
#
# After each page, what it installed is checked by the programs that read
# it: the bash completion (sourced, then compgen), zsh's and fish's, the man
# page (groff -ww, mandoc -T lint) and the systemd units (systemd-analyze
# --user verify). Some page must install each of them.
#
# WALKTHROUGH_BIN=FILE runs the blocks with another build (see with_bin).
# WALKTHROUGH_KEEP=1 keeps the scratch directory (each page's home, output
# and the logs of its simulator and stand-in serve) and names it at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

pages=(README.md AGENT-HANDOFF.md docs/*.md)
work="$(mktemp -d "${TMPDIR:-/tmp}/walkthrough.XXXXXX")"
say() { echo "walkthrough: $*" >&2; }
groups=() # process groups started here (one per block)
pids=()   # other processes started here (simulators, stand-in serves)
cleanup() {
  local id
  for id in "${groups[@]}"; do kill -- "-$id" 2>/dev/null || true; done
  for id in "${pids[@]}"; do kill "$id" 2>/dev/null || true; done
  if [[ -n ${WALKTHROUGH_KEEP:-} ]]; then say "kept $work (each page's home and log)"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# The caller's tool homes, kept in every world.
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
rustup_home="${RUSTUP_HOME:-$HOME/.rustup}"
npm_cache="${npm_config_cache:-$(npm config get cache 2>/dev/null || echo "$HOME/.npm")}"
npm_settings=()
if [[ -z ${npm_config_userconfig:-} && -f $HOME/.npmrc ]]; then
  npm_settings=("npm_config_userconfig=$HOME/.npmrc")
fi

fail=0

# Sorts every shell block of the pages into run / needs / walkthrough /
# unmarked / unchecked (README.md's opening lines). Writes each block to run
# into $work/run.N.sh and prints one line per block: KIND FILE LINE N.
extract() {
  awk -v out="$work" '
    function first_word_kind(p) {
      if (p ~ /^[[:space:]]*<!-- walkthrough:run -->[[:space:]]*$/) return "run"
      if (p ~ /^[[:space:]]*<!-- walkthrough:begin -->[[:space:]]*$/) return "walkthrough"
      if (p ~ /^[[:space:]]*\*Needs /) return "needs"
      return "unmarked"
    }
    FNR == 1 { para = ""; inpara = 0; inblock = 0; seen_walkthrough = 0 }
    inblock {
      if ($0 ~ /^[[:space:]]*```[[:space:]]*$/) { inblock = 0; if (file != "") close(file); next }
      if (file != "") { line = $0; sub("^" indent, "", line); print line > file }
      next
    }
    /^[[:space:]]*```/ {
      inblock = 1; file = ""
      match($0, /^[[:space:]]*/); indent = substr($0, 1, RLENGTH)
      lang = $0; sub(/^[[:space:]]*```/, "", lang); sub(/[[:space:]].*$/, "", lang)
      if (lang == "sh" || lang == "bash" || lang == "shell") {
        kind = first_word_kind(para)
        if (kind == "walkthrough") seen_walkthrough = 1
        # README.md opens with the two scripts a newcomer runs first
        # (scripts/demo.sh, scripts/test.sh), above its walkthrough.
        if (kind == "unmarked" && FILENAME == "README.md" && !seen_walkthrough) kind = "unchecked"
        id = "-"
        if (kind == "run") { n++; id = n; file = out "/run." n ".sh" }
        print kind, FILENAME, FNR, id
      }
      para = ""; inpara = 0
      next
    }
    /^[[:space:]]*$/ { inpara = 0; next }
    !inpara { para = $0; inpara = 1 }
  ' "${pages[@]}"
}

blocks="$(extract)"

# WALKTHROUGH_BIN=FILE (dist-check.sh: the binary from the release archive)
# puts FILE wherever a block names target/release/herdr-core-mcp, and its
# folder on PATH before target/release.
with_bin() { # with_bin SCRIPT: the substitution, in place
  [[ -n ${WALKTHROUGH_BIN:-} ]] || return 0
  sed -i -e "s|\$PWD/target/release/herdr-core-mcp|$WALKTHROUGH_BIN|g" \
    -e "s|target/release/herdr-core-mcp|$WALKTHROUGH_BIN|g" "$1"
}
bin_dir=""
if [[ -n ${WALKTHROUGH_BIN:-} ]]; then
  [[ -x $WALKTHROUGH_BIN && $WALKTHROUGH_BIN == /* ]] || { say "WALKTHROUGH_BIN: not an absolute executable"; exit 1; }
  bin_dir="$(dirname "$WALKTHROUGH_BIN"):"
  say "running every block with $WALKTHROUGH_BIN ($("$WALKTHROUGH_BIN" --version | head -n 1))"
  for script in "$work"/run.*.sh; do with_bin "$script"; done
fi
unmarked="$(awk '$1 == "unmarked" { print "  " $2 ":" $3 }' <<<"$blocks")"
if [[ -n $unmarked ]]; then
  say "FAIL shell blocks neither run here nor marked \"*Needs ...\":"
  echo "$unmarked" >&2
  exit 1
fi
if [[ $(awk '$1 == "walkthrough" && $2 == "README.md"' <<<"$blocks" | wc -l) -ne 1 ||
  $(awk '$1 == "walkthrough"' <<<"$blocks" | wc -l) -ne 1 ]]; then
  say "expected exactly one walkthrough block, in README.md"
  exit 1
fi

# --- One page's world: $dir, $home, $runtime -----------------------------

in_world() { # in_world CMD...: CMD in the current page's world
  "${world[@]}" "$@"
}

page_no=0
new_world() {
  page_no=$((page_no + 1))
  dir="$work/page.$page_no"
  home="$dir/home"
  runtime="$dir/run"
  mkdir -p "$home"
  mkdir -m 700 "$runtime"
  log="$dir/log"
  : >"$log"
  sim_pid=""
  host_pid=""
  # A plain command, so that a process started with & is env itself (then
  # what it execs): its pid, and the group setsid makes, are the ones known.
  world=(env -u XDG_CONFIG_HOME -u XDG_DATA_HOME -u XDG_STATE_HOME -u XDG_CACHE_HOME
    -u HERDR_MCP_TOKEN -u HERDR_MCP_READ_TOKEN -u RUST_LOG
    -u LISTEN_FDS -u LISTEN_PID -u LISTEN_FDNAMES -u MANPATH -u BASH_COMPLETION_USER_DIR
    HOME="$home" XDG_RUNTIME_DIR="$runtime"
    CARGO_HOME="$cargo_home" RUSTUP_HOME="$rustup_home" npm_config_cache="$npm_cache"
    "${npm_settings[@]}"
    PATH="$home/.local/bin:$bin_dir$PWD/target/release:$PATH")
}

# The simulator at hc's default socket, in place of the operator's hc.
start_sim() {
  mkdir -m 700 "$runtime/herdr-core"
  "${world[@]}" "$PWD/target/release/examples/hc-sim" --socket "$runtime/herdr-core/hc.sock" \
    --agents 2 --shells 1 >"$dir/hc-sim.log" 2>&1 &
  sim_pid=$!
  pids+=("$sim_pid")
  local i
  for ((i = 0; i < 100; i++)); do
    [[ -S $runtime/herdr-core/hc.sock ]] && return 0
    sleep 0.1
  done
  say "FAIL the simulator did not start:"
  cat "$dir/hc-sim.log" >&2
  exit 1
}

# A serve over stdio of the default config, as an MCP host runs it: its
# stdin a FIFO held open here, so it waits for messages until stopped.
start_host() {
  mkfifo "$dir/host.in"
  exec {host_fd}<>"$dir/host.in"
  "${world[@]}" bash -c 'exec herdr-core-mcp serve' <"$dir/host.in" >/dev/null 2>"$dir/host.log" &
  host_pid=$!
  pids+=("$host_pid")
  local i
  for ((i = 0; i < 100; i++)); do
    grep -q 'serving MCP over stdio' "$dir/host.log" && return 0
    kill -0 "$host_pid" 2>/dev/null || break
    sleep 0.1
  done
  say "FAIL the serve standing in for the MCP host did not start:"
  cat "$dir/host.log" >&2
  exit 1
}

stop_world() {
  if [[ -n $host_pid ]]; then
    kill "$host_pid" 2>/dev/null || true
    exec {host_fd}>&-
  fi
  if [[ -n $sim_pid ]]; then kill "$sim_pid" 2>/dev/null || true; fi
}

# run_script SCRIPT OUT: runs SCRIPT in the world, in its own process group
# (ended afterwards, with anything the block left running); 0 if it passed.
run_script() {
  local rc=0
  "${world[@]}" setsid bash -euo pipefail "$1" >"$2" 2>&1 </dev/null &
  local group=$!
  groups+=("$group")
  wait "$group" || rc=$?
  kill -- "-$group" 2>/dev/null || true
  return "$rc"
}

expect() { # expect WHAT PATTERN [COUNT]: in $log
  local found
  found="$(grep -Ec -- "$2" "$log" || true)"
  if { [[ $# -ge 3 ]] && [[ $found -eq $3 ]]; } || { [[ $# -lt 3 ]] && [[ $found -gt 0 ]]; }; then
    say "PASS $1"
  else
    say "FAIL $1 (/$2/ found $found times in the output of $file, expected ${3:-some})"
    fail=1
  fi
}

# --- README.md's walkthrough ---------------------------------------------

file=README.md
new_world
awk '/<!-- walkthrough:begin -->/{on=1; next} /<!-- walkthrough:end -->/{on=0} on' README.md |
  sed -e '/^```/d' >"$work/walkthrough.sh"
with_bin "$work/walkthrough.sh"
if [[ -n ${WALKTHROUGH_BIN:-} ]] && ! grep -qF "$WALKTHROUGH_BIN" "$work/walkthrough.sh"; then
  say "FAIL the README walkthrough names no target/release/herdr-core-mcp to run as $WALKTHROUGH_BIN"
  exit 1
fi
say "running the README walkthrough (the first release build takes a few minutes)"
log="$dir/walkthrough.out"
if ! run_script "$work/walkthrough.sh" "$log"; then
  say "FAIL the README walkthrough:"
  cat "$log" >&2
  exit 1
fi
expect "init writes the config" '^wrote .*config\.json \(mode 0600\)'
expect "inspect-core shows the core" '^version +0\.1\.15'
expect "allow --mode normal approves t1 for follow-ups" '^send mode normal'
expect "doctor passes" '^ok +approval +t1 '
expect "doctor reports no FAIL" '^FAIL' 0
expect "both prompts are sent" '"outcome": "sent"' 2
expect "wait_for_status sees t1 done" '"outcome": "reached"'
expect "read_output shows both replies" 'reply: hello there.*reply: and a follow-up'
[[ $fail -eq 0 ]] || { cat "$log" >&2; exit 1; }
log="$dir/log"

# --- The marked blocks, page by page ---------------------------------------

checked_bash=0 checked_zsh=0 checked_fish=0 checked_man=0 checked_units=0

# What a page installed, checked by the programs that read it.
check_installed() {
  local f out
  f="$home/.local/share/bash-completion/completions/herdr-core-mcp"
  if [[ -f $f ]]; then
    checked_bash=1
    # As bash runs it for `herdr-core-mcp allow --m<TAB>`.
    out="$(in_world bash --norc --noprofile -c '
      source "$1"
      fn="$(complete -p herdr-core-mcp | sed -n "s/.* -F \([^ ]*\) .*/\1/p")"
      compopt() { :; }
      COMP_WORDS=(herdr-core-mcp allow --m) COMP_CWORD=2
      "$fn" herdr-core-mcp --m allow
      compgen -W "${COMPREPLY[*]}" -- --mo' bash "$f" 2>&1 </dev/null)" || true
    if [[ $out == --mode ]]; then say "PASS $file: bash completes allow --mo to --mode"; else
      say "FAIL $file: bash completion of allow --mo: $out"; fail=1; fi
  fi
  if [[ -f $home/.zfunc/_herdr-core-mcp ]]; then
    checked_zsh=1
    out="$(in_world zsh -f -c 'fpath+=~/.zfunc; autoload -Uz compinit; compinit -u -d ~/.zcompdump
      print -r -- $_comps[herdr-core-mcp]' 2>&1 </dev/null)" || true
    if [[ $out == _herdr-core-mcp ]]; then say "PASS $file: zsh finds the completion on fpath"; else
      say "FAIL $file: zsh completion: $out"; fail=1; fi
  fi
  if [[ -f $home/.config/fish/completions/herdr-core-mcp.fish ]]; then
    checked_fish=1
    out="$(in_world fish -c 'complete -C "herdr-core-mcp allow --mo"' 2>&1 </dev/null | cut -f1)" || true
    if [[ $out == --mode ]]; then say "PASS $file: fish completes allow --mo to --mode"; else
      say "FAIL $file: fish completion: $out"; fail=1; fi
  fi
  f="$home/.local/share/man/man1/herdr-core-mcp.1"
  if [[ -f $f ]]; then
    checked_man=1
    if out="$(groff -ww -z -man "$f" 2>&1)" && [[ -z $out ]] &&
      out="$(mandoc -T lint -W warning "$f" 2>&1)" && [[ -z $out ]]; then
      say "PASS $file: the man page passes groff -ww and mandoc -T lint"
    else
      say "FAIL $file: the man page: $out"; fail=1
    fi
  fi
  f="$home/.config/systemd/user"
  if [[ -f $f/herdr-core-mcp.service || -f $f/herdr-core-mcp.socket ]]; then
    checked_units=1
    # verify exits 0 on an unknown key or a bad value: any line is a finding.
    if out="$(in_world env SYSTEMD_LOG_COLOR=0 systemd-analyze --user verify \
      "$f/herdr-core-mcp.service" "$f/herdr-core-mcp.socket" 2>&1 </dev/null)" && [[ -z $out ]]; then
      say "PASS $file: systemd-analyze --user verify passes the installed units"
    else
      say "FAIL $file: systemd-analyze --user verify: $out"; fail=1
    fi
  fi
}

# What each operator page's comments promise.
check_page() {
  case $file in
    README.md)
      expect "the setup writes the config" '^wrote .*/\.config/herdr-core-mcp/config\.json \(mode 0600\)'
      expect "the setup approves t1 for follow-ups" '^send mode normal'
      expect "the setup's doctor passes" '^ok +approval +t1 '
      ;;
    AGENT-HANDOFF.md)
      expect "init writes the config" '^wrote .*/\.config/herdr-core-mcp/config\.json \(mode 0600\)'
      expect "doctor notes a read-only setup" '^note +coreId +not set'
      expect "status shows the host's serve" '^[0-9]+ +stdio '
      expect "allow --mode normal approves t1 for follow-ups" '^send mode normal'
      expect "reload signals the serve (allow, the file put back, revoke)" '^sent SIGHUP to serve' 3
      expect "reload refuses the broken config" '^exit 2$' 1
      expect "doctor passes" '^ok +approval +t1 '
      expect "both prompts are sent" '"outcome": "sent"' 2
      expect "wait_for_status sees t1 done after the first" '"outcome": "reached"'
      expect "revoke removes the approval" '^revoked 1 approval'
      ;;
    docs/operations.md)
      expect "init writes the config" '^wrote .*/\.config/herdr-core-mcp/config\.json \(mode 0600\)'
      expect "doctor --json: a read-only setup fails nothing" '"failed": 0'
      expect "revoke --dry-run --all lists both" '^would revoke t[12] ' 2
      ;;
  esac
  case $file in
    README.md | AGENT-HANDOFF.md | docs/operations.md) expect "doctor reports no FAIL" '^FAIL' 0 ;;
  esac
  if grep -q 'local/bin/herdr-core-mcp' "$file"; then
    if [[ -x $home/.local/bin/herdr-core-mcp ]] &&
      [[ $(in_world bash -c 'command -v herdr-core-mcp' </dev/null) == "$home/.local/bin/herdr-core-mcp" ]]; then
      say "PASS $file: the install puts herdr-core-mcp in ~/.local/bin, first on PATH"
    else
      say "FAIL $file: no ~/.local/bin/herdr-core-mcp after its install steps"
      fail=1
    fi
  fi
}

while read -r file; do
  [[ $file == README.md ]] || new_world # README.md's: its walkthrough's
  start_sim
  while read -r kind _ line n; do
    if [[ -z $host_pid && -f $home/.config/herdr-core-mcp/config.json ]]; then start_host; fi
    echo "== $file:$line" >>"$log"
    if run_script "$work/run.$n.sh" "$dir/out.$n"; then
      say "PASS the block at $file:$line"
    else
      say "FAIL the block at $file:$line:"
      cat "$dir/out.$n" >&2
      fail=1
    fi
    cat "$dir/out.$n" >>"$log"
  done < <(awk -v f="$file" '$1 == "run" && $2 == f' <<<"$blocks")
  stop_world
  check_page
  check_installed
done < <(awk '$1 == "run" && !seen[$2]++ { print $2 }' <<<"$blocks")

for kind in bash zsh fish man units; do
  var="checked_$kind"
  if [[ ${!var} -eq 0 ]]; then
    say "FAIL no page installs the $kind file any more, so it went unchecked"
    fail=1
  fi
done
say "$(grep -c '^needs ' <<<"$blocks" || true) blocks marked \"*Needs ...\" not run"
[[ $fail -eq 0 ]] || exit 1
say "OK"
