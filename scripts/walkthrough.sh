#!/usr/bin/env bash
# Runs the README's by-hand walkthrough exactly as written (the shell block
# between <!-- walkthrough:begin --> and <!-- walkthrough:end -->), then
# checks that it did what its comments promise: doctor all ok, the prompt
# sent, the reply on screen. CI runs this, so the README
# cannot drift from what works. Needs node/npx (the MCP Inspector CLI is
# fetched by npx from the npm registry).
set -euo pipefail
cd "$(dirname "$0")/.."

block="$(awk '/<!-- walkthrough:begin -->/{on=1; next} /<!-- walkthrough:end -->/{on=0} on' README.md |
  sed -e '/^```/d')"
[[ -n $block ]] || { echo "walkthrough: no walkthrough block in README.md" >&2; exit 1; }

# A stale socket from an interrupted run would satisfy the block's wait.
rm -f /tmp/hc-demo.sock
log="$(mktemp "${TMPDIR:-/tmp}/walkthrough.XXXXXX")"
cleanup() { pkill -f 'hc-sim --socket /tmp/hc-demo.sock' 2>/dev/null || true; rm -f "$log"; }
trap cleanup EXIT

echo "walkthrough: running the README block" >&2
bash -euo pipefail -c "$block" >"$log" 2>&1 || {
  echo "walkthrough: the README block failed:" >&2
  cat "$log" >&2
  exit 1
}

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
echo "walkthrough: OK" >&2
