#!/usr/bin/env bash
# One bad server stays one bad server (issue 55): the wall time of `toolbind call` and
# `toolbind list` with a config of the reference server alone, against the same config
# plus a server that exits at once, one that never answers `initialize` and an HTTP one
# that needs a login (401 with an OAuth challenge).
# Runs alternate (alone, with the bad ones), ROUNDS times each; prints a Markdown table of
# medians. Needs tests/clients/install.sh (the reference server) and a built toolbind.
#
#   bench/mcp-isolation.sh [TOOLBIND]   # default: target/release/toolbind, else debug
set -euo pipefail
root=$(pwd)
bin=${1:-}
if [ -z "$bin" ]; then
  if [ -x "$root/target/release/toolbind" ]; then bin="$root/target/release/toolbind"
  else bin="$root/target/debug/toolbind"; fi
fi
rounds=${ROUNDS:-5}
clients=${TOOLBIND_CLIENTS:-${XDG_CACHE_HOME:-$HOME/.cache}/toolbind/clients}
everything="$clients/servers/node_modules/.bin/mcp-server-everything"
[ -x "$everything" ] || { echo "no $everything: run tests/clients/install.sh" >&2; exit 1; }
misbehaving="$root/cli/tests/fixtures/mcp_servers/misbehaving.py"
work=$(mktemp -d)
python3 "$misbehaving" oauth --http >"$work/login.log" 2>&1 &
login_pid=$!
trap 'kill $login_pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do grep -q "http://" "$work/login.log" && break; sleep 0.1; done
login_url=$(grep -o "http://[^ ]*" "$work/login.log" | head -1)
mkdir -p "$work/empty"
cat >"$work/alone.json" <<JSON
{"mcpServers": {"everything": {"command": "$everything", "args": ["stdio"]}}}
JSON
cat >"$work/bad.json" <<JSON
{"mcpServers": {
  "everything": {"command": "$everything", "args": ["stdio"]},
  "dead": {"command": "sh", "args": ["-c", "exit 3"]},
  "hangs": {"command": "python3", "args": ["$misbehaving", "silent"]},
  "login": {"type": "http", "url": "$login_url"}
}}
JSON
ms() { # EXPECTED_CODE CMD... -> milliseconds of wall time; a wrong exit code stops the run
  local want=$1 t0 t1 code=0
  shift
  t0=$(date +%s%N)
  "$@" >"$work/out" 2>&1 || code=$?
  t1=$(date +%s%N)
  if [ "$code" != "$want" ]; then
    echo "exit $code, not $want: $*" >&2
    cat "$work/out" >&2
    exit 1
  fi
  echo $(((t1 - t0) / 1000000))
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A runs
for _ in $(seq "$rounds"); do
  for cfg in alone bad; do
    runs[call_$cfg]+="$(ms 0 "$bin" call echo --args '{"message":"hi"}' --mcp-config "$work/$cfg.json" "$work/empty") "
    runs[list_$cfg]+="$(ms "$([ $cfg = bad ] && echo 1 || echo 0)" "$bin" list --mcp-config "$work/$cfg.json" --mcp-wait 5 "$work/empty") "
  done
done
echo "| command | reference server alone (ms) | + a dead, a hanging and a needs-login server (ms) |"
echo "|---|---:|---:|"
for what in call list; do
  a=$(echo "${runs[${what}_alone]}" | tr ' ' '\n' | grep . | median)
  b=$(echo "${runs[${what}_bad]}" | tr ' ' '\n' | grep . | median)
  echo "| $what | $a | $b |"
done
echo
echo "toolbind: $bin; $rounds rounds, medians; list with --mcp-wait 5"
