#!/usr/bin/env bash
# The edit-test loop (BENCHMARKS.md § the test fold): one line changed in runtime/src, then
# (1) one runtime test, (2) one CLI test, (3) the whole suite built (`--no-run`), each
# timed after a first warm build. Run it in two checkouts (before and after a change)
# sharing one CARGO_TARGET_DIR to compare them in the same session.
#
#   bench/test-loop.sh [RUNS]      (default 3; restores runtime/src/lib.rs at the end)
#
# The test names are the folded ones (`--test it FILE::NAME`); for a checkout from before
# the fold set RUNTIME_TEST="loader registry_lookups" CLI_TEST="help help".
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
runtime_test=${RUNTIME_TEST:-"it loader::registry_lookups"}
cli_test=${CLI_TEST:-"it help::"}
lib=runtime/src/lib.rs
keep=$(mktemp)
cp "$lib" "$keep"
trap 'cp "$keep" "$lib"; rm -f "$keep"' EXIT
echo '#[allow(dead_code)] const EDIT_PROBE: u32 = 0;' >>"$lib"
loop() {
  local what=$1
  shift
  "$@" >/dev/null 2>&1
  for i in $(seq 1 "$runs"); do
    sed -i "s/const EDIT_PROBE: u32 = [0-9]*;/const EDIT_PROBE: u32 = $i;/" "$lib"
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || echo "$what: failed" >&2
    end=$(date +%s.%N)
    printf '%s run %d: %.2f s\n' "$what" "$i" "$(echo "$end - $start" | bc)"
  done
}
# shellcheck disable=SC2086 # the test specs are words
loop "runtime test ($runtime_test)" cargo test -q -p toolbind --test $runtime_test
# shellcheck disable=SC2086
loop "cli test ($cli_test)" cargo test -q -p toolbind-cli --test $cli_test
loop "workspace --no-run" cargo test -q --workspace --no-run
