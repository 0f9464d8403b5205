#!/usr/bin/env bash
# Scale-out check and benchmark for `toolbind serve --http --stateless` (not run by CI: it
# needs a release build and HAProxy, and takes about a minute).
#
# Two stateless replicas serve cli/tests/fixtures/tools on loopback behind HAProxy
# (Debian's package; installed with apt when missing). The official MCP Python SDK client
# (tests/clients/install.sh) runs CLIENTS concurrent clients x CALLS calls of `hello_ts`
# (read-only, so safe to repeat), three times:
#   1. one replica, no balancer (the baseline);
#   2. two replicas behind HAProxy;
#   3. the same, with replica a killed (SIGKILL, a crash, not a drain) once it has answered
#      KILL_AFTER calls of this run;
#   4. two replicas with sessions behind a backend with session affinity (the HAProxy
#      `stick` lines of docs/http.md), the client in `initialize` mode: each session stays on the
#      replica that opened it;
#   5. the client side as a Rust agent instead: toolbind's own MCP executor
#      (cli/benches/fleet.rs: one Runtime, one McpServer::http, CLIENTS concurrent loops),
#      two stateless replicas behind HAProxy (replica a started again);
#   6. the same, with replica a killed mid-run as in run 3.
# Run 6 must answer every call too, with no retry in the client beyond the executor's own:
# it sends a read-only or idempotent tool's call once more, on a new connection, when its
# connection failed.
# Run 3 must answer every call. HAProxy retries a request whose connection failed or
# whose server died before answering (`retry-on conn-failure empty-response
# response-timeout`, `option redispatch`: on the other replica), and its health check
# (GET /healthz every 500 ms) takes the dead replica out. What HAProxy cannot replay (a
# client connection it had to close with the dead server's) the client retries: on a
# connection failure it reconnects and makes the call again, as a client behind a load
# balancer should. Its `retries` counts those. Replaying a request after a server died
# mid-call may run the call twice: retry only idempotent tools (MCP's `idempotentHint`; in
# TOOL.md `annotations: {idempotent: true}` or `read_only: true`).
#
#   bench/scale-out.sh            # CLIENTS=16 CALLS=200 KILL_AFTER=400
# Environment: TOOLBIND_BIN (default target/release/toolbind, built when missing),
# TOOLBIND_CLIENTS (where install.sh put the SDKs), CLIENTS, CALLS, KILL_AFTER.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench -q -p toolbind-cli --bench fleet --no-run 2>/dev/null
clients_n=${CLIENTS:-16}
calls=${CALLS:-200}
kill_after=${KILL_AFTER:-400}
if ! command -v haproxy >/dev/null; then
  echo "installing haproxy"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends haproxy >/dev/null
fi
# shellcheck source=bench/common.sh
. bench/common.sh

free_port() { "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_ok() { # URL: until it answers 200 (10 s at most)
  "$py" - "$1" <<'PY'
import sys, time, urllib.request
for _ in range(100):
    try:
        if urllib.request.urlopen(sys.argv[1], timeout=1).status == 200:
            sys.exit(0)
    except Exception:
        time.sleep(0.1)
sys.exit(f"{sys.argv[1]} did not come up")
PY
}
replica() { # NAME PORT [ARGS...]: starts one (stateless unless ARGS say), sets $replica_pid
  local name=$1 port=$2
  shift 2
  "$bin" serve --dir "$tools" --http "127.0.0.1:$port" "${@:---stateless}" \
    2>"$tmp/$name.log" &
  replica_pid=$!
  pids+=("$replica_pid")
  wait_ok "http://127.0.0.1:$port/healthz"
}
load() { # URL LABEL
  local out
  out=$("$py" "$client" "$1" "$TOOLBIND_TOKEN" load auto "$clients_n" "$calls" retry 2>>"$tmp/client.log" | tail -n 1)
  echo "$2: $out"
}
served() { grep -c "of \`hello_ts\`: ok" "$tmp/$1.log" || true; }

a=$(free_port); b=$(free_port); lb=$(free_port)
replica a "$a"; pid_a=$replica_pid
replica b "$b"
# Two replicas with sessions, behind a backend with session affinity (README).
c=$(free_port); d=$(free_port); lb_sessions=$(free_port)
replica c "$c" --max-sessions 256
replica d "$d" --max-sessions 256
cat >"$tmp/haproxy.cfg" <<CFG
global
    maxconn 2000
defaults
    mode http
    timeout connect 1s
    timeout client 60s
    timeout server 60s
    retries 3
    option redispatch 1
    retry-on conn-failure empty-response response-timeout
frontend mcp
    bind 127.0.0.1:$lb
    default_backend toolbind
backend toolbind
    balance roundrobin
    option httpchk GET /healthz
    http-check expect status 200
    server a 127.0.0.1:$a check inter 500ms fall 1 rise 2
    server b 127.0.0.1:$b check inter 500ms fall 1 rise 2
frontend mcp_sessions
    bind 127.0.0.1:$lb_sessions
    default_backend toolbind_sessions
backend toolbind_sessions
    balance roundrobin
    option httpchk GET /healthz
    stick-table type string len 64 size 100k expire 10m
    stick match req.hdr(mcp-session-id)
    stick store-response res.hdr(mcp-session-id)
    server c 127.0.0.1:$c check inter 500ms
    server d 127.0.0.1:$d check inter 500ms
CFG
haproxy -c -q -f "$tmp/haproxy.cfg"
haproxy -db -f "$tmp/haproxy.cfg" 2>"$tmp/haproxy.log" &
pids+=($!)
wait_ok "http://127.0.0.1:$lb/healthz"

echo "toolbind $("$bin" --version | cut -d' ' -f2), $(haproxy -v | head -n 1 | cut -d' ' -f1-3), $clients_n clients x $calls calls of hello_ts, Python SDK client (mode auto)"
load "http://127.0.0.1:$b/mcp" "1. one replica, direct       "
base_a=$(served a); base_b=$(served b)
load "http://127.0.0.1:$lb/mcp" "2. two replicas, HAProxy     "
before_a=$(served a); before_b=$(served b)
echo "   run 2 served by a: $((before_a - base_a)), by b: $((before_b - base_b))"
(
  # Kill replica a once it has answered KILL_AFTER calls of this run: mid-run, whatever
  # the client's start-up time.
  until [ "$(served a)" -ge $((before_a + kill_after)) ]; do sleep 0.05; done
  kill -9 "$pid_a"
  echo "   (replica a killed after answering $kill_after calls of run 3)"
) &
result=$(load "http://127.0.0.1:$lb/mcp" "3. two, one killed mid-run   ")
wait $! 2>/dev/null || true
echo "$result"
echo "   run 3 served by a: $(($(served a) - before_a)), by b: $(($(served b) - before_b)) (a call may be counted twice when it was replayed)"
echo "$result" | grep -q '"failed": 0' || { echo "FAILED: calls were lost"; tail -n 20 "$tmp/client.log"; exit 1; }
echo "every call answered"
# Sessions (initialize, then Mcp-Session-Id on every request) need affinity: HAProxy
# learns each session's replica from the initialize answer.
sticky=$("$py" "$client" "http://127.0.0.1:$lb_sessions/mcp" "$TOOLBIND_TOKEN" load legacy "$clients_n" "$calls" 2>>"$tmp/client.log" | tail -n 1)
echo "4. sessions, two replicas, affinity: $sticky"
echo "   served by c: $(served c), by d: $(served d)"
echo "$sticky" | grep -q '"failed": 0' || { echo "FAILED: session calls were lost"; exit 1; }
# A Rust agent on toolbind's MCP executor, against the stateless pair again.
replica a "$a"; pid_a=$replica_pid
sleep 1.5 # HAProxy's health check: `rise 2` at 500 ms
fleet() { # URL LABEL
  local out
  out=$(cargo bench -q -p toolbind-cli --bench fleet -- "$1" "$clients_n" "$calls" 2>>"$tmp/client.log" | tail -n 1)
  echo "$2: $out"
}
base_a=$(served a); base_b=$(served b)
fleet "http://127.0.0.1:$lb/mcp" "5. Rust executor, HAProxy   "
before_a=$(served a); before_b=$(served b)
echo "   run 5 served by a: $((before_a - base_a)), by b: $((before_b - base_b))"
(
  until [ "$(served a)" -ge $((before_a + kill_after)) ]; do sleep 0.05; done
  kill -9 "$pid_a"
  echo "   (replica a killed after answering $kill_after calls of run 6)"
) &
result=$(fleet "http://127.0.0.1:$lb/mcp" "6. Rust executor, one killed")
wait $! 2>/dev/null || true
echo "$result"
echo "   run 6 served by a: $(($(served a) - before_a)), by b: $(($(served b) - before_b))"
echo "$result" | grep -q '"failed":0' || { echo "FAILED: the executor lost calls"; tail -n 20 "$tmp/client.log"; exit 1; }
echo "every call answered"
