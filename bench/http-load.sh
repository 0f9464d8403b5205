#!/usr/bin/env bash
# `toolbind serve` throughput and latency over Streamable HTTP, against the same server
# over stdio in the same run (not run by CI; about a minute with a release build).
#
# The client is the official MCP Python SDK (tests/clients/install.sh) driving
# cli/tests/clients/http_client.py; the tool is cli/tests/fixtures/tools/hello_ts (a warm
# TypeScript worker, jailed as by default), CLIENTS x CALLS calls per case:
#   stdio            one `toolbind serve` session (stdio is one client per process), CLIENTS
#                    calls in flight on it;
#   http sessions    CLIENTS clients, each its own session (`initialize`) on one server;
#   http stateless   CLIENTS clients on one `--stateless` server, the SDK's default
#                    protocol (2026-07-28: no session, one POST per call);
#   http stateless, legacy client  the same with `initialize` (no session either);
#   ts sdk stateless the baseline: bench/ts-http-server.mjs, a stateless Streamable HTTP
#                    server on the official TypeScript SDK running the same JavaScript
#                    in-process (so its CPU figure includes the tool's), legacy client
#                    (it has no 2026-07-28).
# The cases alternate ROUNDS times, so machine noise hits all alike.
#
#   bench/http-load.sh            # CLIENTS=16 CALLS=200 ROUNDS=3
set -euo pipefail
cd "$(dirname "$0")/.."
clients_n=${CLIENTS:-16}
calls=${CALLS:-200}
rounds=${ROUNDS:-3}
# shellcheck source=bench/common.sh
. bench/common.sh

serve_http() { # LOG ARGS...: starts a server on a free port; sets $url and $pid
  local log=$1
  shift
  "$bin" serve --dir "$tools" --http 127.0.0.1:0 "$@" 2>"$log" &
  pid=$!
  pids+=("$pid")
  wait_url "$log"
}
serve_http "$tmp/sessions.log"
sessions=$url sessions_pid=$pid
serve_http "$tmp/stateless.log" --stateless
stateless=$url stateless_pid=$pid
node bench/ts-http-server.mjs "$sdk/node/node_modules/@modelcontextprotocol/sdk" 0 2>"$tmp/ts.log" &
ts_pid=$!
pids+=("$ts_pid")
wait_url "$tmp/ts.log"
ts=$url
# The server's CPU time per call (user + system, the tool's worker not included).
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
http_case() { # URL PID MODE
  local before out
  before=$(ticks "$2")
  out=$("$py" "$client" "$1" "$TOOLBIND_TOKEN" load "$3" "$clients_n" "$calls" 2>/dev/null | tail -n 1)
  echo "$out server_cpu_us_per_call=$((($(ticks "$2") - before) * 1000000 / $(getconf CLK_TCK) / (clients_n * calls)))"
}

echo "toolbind $("$bin" --version | cut -d' ' -f2), mcp (Python SDK) $("$py" -c 'import importlib.metadata as m; print(m.version("mcp"))'), TypeScript SDK $(node -p "require('$sdk/node/node_modules/@modelcontextprotocol/sdk/package.json').version"), node $(node --version), $clients_n clients x $calls calls of hello_ts, $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
for r in $(seq "$rounds"); do
  echo "round $r"
  echo "  stdio           $("$py" "$client" load-stdio "$clients_n" "$calls" "$bin" serve --dir "$tools" 2>/dev/null | tail -n 1)"
  echo "  http sessions   $(http_case "$sessions" "$sessions_pid" legacy)"
  echo "  http stateless  $(http_case "$stateless" "$stateless_pid" auto)"
  echo "  http stateless, legacy client  $(http_case "$stateless" "$stateless_pid" legacy)"
  echo "  ts sdk stateless, legacy client  $(http_case "$ts" "$ts_pid" legacy)"
done
