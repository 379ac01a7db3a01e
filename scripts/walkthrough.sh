#!/usr/bin/env bash
# Runs the documentation's example commands exactly as written, so README.md
# and docs/ cannot drift from what works. CI runs this. Needs node/npx (the
# MCP Inspector CLI is fetched by npx from the npm registry).
#
# Which shell blocks (fences opened with sh, bash or shell) it runs, in
# README.md and docs/*.md (also in docs/architecture.md, "Example commands
# in these pages"):
#
# - README.md's by-hand walkthrough, the block between
#   <!-- walkthrough:begin --> and <!-- walkthrough:end -->. It runs
#   against the bundled simulator and is then checked against what its
#   comments promise: doctor all ok, the prompt sent, the reply on screen.
# - A block whose preceding paragraph is the line <!-- walkthrough:run -->.
#   It runs with bash -euo pipefail from the repository root, with
#   target/release first on PATH and HOME set to an empty scratch directory
#   (so `~` is never the caller's home), and must exit 0.
# - A block whose preceding paragraph starts with "*Needs " (for example
#   "*Needs a real hc: ...*", "*Needs systemd: ...*") is not run; that
#   visible line says what it needs and why.
#
# Any other shell block in docs/ fails the run: every example there either
# runs here or says why it cannot. README.md's other blocks (its first
# lines, the two scripts a newcomer runs first) are left alone.
set -euo pipefail
cd "$(dirname "$0")/.."

docs=(README.md docs/*.md)
work="$(mktemp -d "${TMPDIR:-/tmp}/walkthrough.XXXXXX")"
log="$work/log"
sim_group=""
cleanup() {
  # The README block starts the simulator; its process group is ended here
  # if the block failed before its own `kill %1`.
  if [[ -n $sim_group ]]; then kill -- "-$sim_group" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# Sorts every shell block of the pages into run / needs / walkthrough /
# unmarked (docs/) / unchecked (README.md). Writes each block to run into $work/run.N.sh and prints one
# line per block: KIND FILE:LINE.
extract() {
  awk -v out="$work" '
    function first_word_kind(p) {
      if (p ~ /^[[:space:]]*<!-- walkthrough:run -->[[:space:]]*$/) return "run"
      if (p ~ /^[[:space:]]*<!-- walkthrough:begin -->[[:space:]]*$/) return "walkthrough"
      if (p ~ /^[[:space:]]*\*Needs /) return "needs"
      return "unmarked"
    }
    FNR == 1 { para = ""; inpara = 0; inblock = 0 }
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
        # README.md opens with the two scripts a newcomer runs first
        # (scripts/demo.sh, scripts/test.sh); only docs/ must mark every block.
        if (kind == "unmarked" && FILENAME !~ /^docs\//) kind = "unchecked"
        if (kind == "run") { n++; file = out "/run." n ".sh" }
        print kind, FILENAME ":" FNR
      }
      para = ""; inpara = 0
      next
    }
    /^[[:space:]]*$/ { inpara = 0; next }
    !inpara { para = $0; inpara = 1 }
  ' "${docs[@]}"
}

blocks="$(extract)"
unmarked="$(grep '^unmarked ' <<<"$blocks" || true)"
if [[ -n $unmarked ]]; then
  echo "walkthrough: FAIL shell blocks neither run here nor marked \"*Needs ...\":" >&2
  sed 's/^unmarked /  /' <<<"$unmarked" >&2
  exit 1
fi
[[ $(grep -c '^walkthrough ' <<<"$blocks") -eq 1 ]] || {
  echo "walkthrough: expected exactly one walkthrough block in README.md" >&2
  exit 1
}

block="$(awk '/<!-- walkthrough:begin -->/{on=1; next} /<!-- walkthrough:end -->/{on=0} on' README.md |
  sed -e '/^```/d')"
[[ -n $block ]] || { echo "walkthrough: no walkthrough block in README.md" >&2; exit 1; }

# A stale socket from an interrupted run would satisfy the block's wait.
rm -f /tmp/hc-demo.sock

echo "walkthrough: running the README block" >&2
# Its own process group (setsid), so cleanup can end the simulator by id.
setsid bash -euo pipefail -c "$block" >"$log" 2>&1 &
sim_group=$!
if ! wait "$sim_group"; then
  echo "walkthrough: the README block failed:" >&2
  cat "$log" >&2
  exit 1
fi

fail=0
expect() { # expect WHAT PATTERN
  if grep -Eq -- "$2" "$log"; then
    echo "walkthrough: PASS $1" >&2
  else
    echo "walkthrough: FAIL $1 (no /$2/ in the output)" >&2
    fail=1
  fi
}
expect "inspect-core shows the core" '^version +0\.1\.15'
expect "allow approves t1" '^approving on core '
expect "doctor passes" '^ok +approval +t1 '
if grep -q '^FAIL' "$log"; then echo "walkthrough: FAIL doctor reported a FAIL line" >&2; fail=1; fi
expect "send_prompt sends" '"outcome": "sent"'
expect "read_output shows the reply" 'reply: hello there'
if [[ $fail -ne 0 ]]; then
  cat "$log" >&2
  exit 1
fi

# The marked blocks of the pages, each in a scratch HOME.
n=0
while read -r kind where; do
  [[ $kind == run ]] || continue
  n=$((n + 1))
  scratch="$work/home.$n"
  mkdir "$scratch"
  if HOME="$scratch" PATH="$PWD/target/release:$PATH" \
    bash -euo pipefail "$work/run.$n.sh" >"$work/out.$n" 2>&1; then
    echo "walkthrough: PASS the block at $where" >&2
  else
    echo "walkthrough: FAIL the block at $where:" >&2
    cat "$work/out.$n" >&2
    fail=1
  fi
done <<<"$blocks"
echo "walkthrough: $(grep -c '^needs ' <<<"$blocks" || true) blocks marked \"*Needs ...\" not run" >&2
[[ $fail -eq 0 ]] || exit 1
echo "walkthrough: OK" >&2
