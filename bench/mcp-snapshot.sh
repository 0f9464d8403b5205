#!/usr/bin/env bash
# `toolbind mcp snapshot` against the official TypeScript SDK client listing the same
# servers (bench/ts-list-tools.mjs), interleaved, ROUNDS rounds (default 5), medians.
# The servers are the three reference servers installed by tests/clients/install.sh,
# started from their bins (not npx), and cli/tests/fixtures/mcp_servers/misbehaving.py in
# its well-behaved `pages` mode, whose Python starts quickly: there, what is left is
# mostly the client's own start and work. Last, server-everything over Streamable HTTP,
# started once: only the clients start each round.
#
#   bench/mcp-snapshot.sh            (from the repository root; builds the release binary)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
rounds=${ROUNDS:-5}
bins="$sdk/servers/node_modules/.bin"
ts_sdk="$sdk/node/node_modules/@modelcontextprotocol/sdk"
mkdir -p "$tmp/data"
export MEMORY_FILE_PATH="$tmp/data/memory.json"

now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "toolbind $("$bin" --version | cut -d' ' -f2), TypeScript SDK $(node -p "require('$ts_sdk/package.json').version"), node $(node --version), $rounds rounds, $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
echo
echo "| server | tools | toolbind mcp snapshot | TypeScript SDK client | toolbind / TS |"
echo "| --- | --- | --- | --- | --- |"
row() { # NAME COMMAND ARG...
  local name=$1
  shift
  local tb=() ts=()
  for _ in $(seq "$rounds"); do
    local t0
    t0=$(now)
    if [[ $1 == http* ]]; then
      "$bin" mcp snapshot --name "$name" --out "$tmp/tb.json" --url "$1" 2>/dev/null
    else
      "$bin" mcp snapshot --name "$name" --out "$tmp/tb.json" -- "$@" 2>/dev/null
    fi
    tb+=($(( ($(now) - t0) / 1000 )))
    t0=$(now)
    node bench/ts-list-tools.mjs "$ts_sdk" "$tmp/ts.json" "$@" 2>/dev/null
    ts+=($(( ($(now) - t0) / 1000 )))
  done
  # Both listed the same tools.
  local a b
  a=$(node -p "JSON.stringify(require('$tmp/tb.json').tools.map(t => t.name))")
  b=$(node -p "JSON.stringify(require('$tmp/ts.json').tools.map(t => t.name))")
  [ "$a" = "$b" ] || { echo "$name: the two clients listed different tools: $a / $b" >&2; exit 1; }
  local n mtb mts
  n=$(node -p "require('$tmp/tb.json').tools.length")
  mtb=$(printf '%s\n' "${tb[@]}" | median)
  mts=$(printf '%s\n' "${ts[@]}" | median)
  awk -v s="$name" -v n="$n" -v a="$mtb" -v b="$mts" \
    'BEGIN {printf "| %s | %d | %.0f ms | %.0f ms | %.2fx |\n", s, n, a/1000, b/1000, a/b}'
}
row everything "$bins/mcp-server-everything" stdio
row filesystem "$bins/mcp-server-filesystem" "$tmp/data"
row memory "$bins/mcp-server-memory"
row misbehaving-pages python3 cli/tests/fixtures/mcp_servers/misbehaving.py pages
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PORT=$port "$bins/mcp-server-everything" streamableHttp >"$tmp/everything-http.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  grep -q "listening on port" "$tmp/everything-http.log" && break
  sleep 0.1
done
row "everything over HTTP" "http://127.0.0.1:$port/mcp"
