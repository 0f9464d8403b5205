# Sourced by the bench/ scripts, from the repository root: the release binary (built when
# missing), the MCP SDKs (installed when missing), a scratch folder and the processes to
# stop on exit, and a fresh bearer token in TOOLBIND_TOKEN.
bin=${TOOLBIND_BIN:-target/release/toolbind}
[ -x "$bin" ] || cargo build --release -p toolbind-cli
sdk="${TOOLBIND_CLIENTS:-${XDG_CACHE_HOME:-$HOME/.cache}/toolbind/clients}"
[ -x "$sdk/py/bin/python" ] || tests/clients/install.sh
py="$sdk/py/bin/python"
client=cli/tests/clients/http_client.py
tools=cli/tests/fixtures/tools

tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
export TOOLBIND_TOKEN
TOOLBIND_TOKEN=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')

wait_url() { # LOG: sets $url to the first http://.../mcp the log names (10 s at most)
  for _ in $(seq 100); do
    url=$(grep -o 'http://[0-9.:]*/mcp' "$1" | head -n 1 || true)
    [ -n "$url" ] && return
    sleep 0.1
  done
  echo "the server did not start: $(cat "$1")" >&2
  exit 1
}
