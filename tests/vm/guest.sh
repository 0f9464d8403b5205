#!/usr/bin/env bash
# The guest side of tests/vm/run: runs in the cgroup-v2 VM that script boots, never on a
# host (it rewrites the cgroup tree and the user-namespace sysctl of the machine it runs
# on, so it refuses to start outside a virtme-ng guest).
#
#   guest.sh OUT                 as root in the VM: every phase, in order
#   guest.sh --body PHASE WORK   one phase's checks, as that phase's user (run by the above)
#
# OUT is a folder shared with the host (virtme-ng --rwdir). OUT/env, written by
# tests/vm/run, names the test binaries, the CLI, the user and the test lists. Each phase
# leaves OUT/PHASE/summary (one line per check: PASS, FAIL, SKIP for a test that skipped
# itself, INFO) and its logs; OUT/PHASE/status holds `passed` or `failed`.
#
# Phases (see tests/README.md, "The cgroup-v2 VM stage"):
#   root         root, in the root cgroup, as the VM boots
#   delegated    the user, in user@UID.service/app.slice/toolbind-agent.scope, with
#                user@UID.service owned by the user and memory/pids/cpu enabled for its
#                children: systemd's user manager layout
#   undelegated  the user, in a root-owned user-UID.slice/session-1.scope, no user@UID.service;
#                root's folders from the root phase are still there
#   nouserns     as delegated, with user.max_user_namespaces=0 (bwrap cannot make its
#                namespace: Ubuntu 23.10+'s AppArmor restriction, emulated)
set -uo pipefail

export LANG=C.UTF-8
cg=/sys/fs/cgroup
controllers="+memory +pids +cpu"

# ---------------------------------------------------------------------------------------
# One phase's checks, as the phase's user. Writes WORK/summary.
body() {
  local phase=$1 work=$2
  # shellcheck source=/dev/null
  . "$work/env"
  cd "$work" || exit 1
  local sum=$work/summary
  : >"$sum"
  pass() { echo "PASS $*" >>"$sum"; }
  fail() { echo "FAIL $*" >>"$sum"; }
  info() { echo "INFO $*" >>"$sum"; }
  # expect NAME COND DETAIL: PASS or FAIL by COND (0 = as expected).
  expect() { if [ "$2" = 0 ]; then pass "$1: $3"; else fail "$1: $3"; fi; }
  local uid
  uid=$(id -u)
  local own
  own=$cg$(sed -n 's/^0:://p' /proc/self/cgroup)
  info "identity: $(id)"
  info "cgroup: ${own#"$cg"} (owner $(stat -c %U "$own"); controllers: $(cat "$own/cgroup.controllers"))"
  info "/sys/fs/cgroup/cgroup.controllers: $(cat $cg/cgroup.controllers)"
  info "user.max_user_namespaces: $(cat /proc/sys/user/max_user_namespaces)"
  info "TOOLBIND_TEST_PHASE=$TOOLBIND_TEST_PHASE TOOLBIND_TEST_EXPECT_ENFORCED=$TOOLBIND_TEST_EXPECT_ENFORCED"
  if out=$(timeout 60 bwrap --unshare-all --ro-bind / / --proc /proc --dev /dev true 2>&1); then
    info "bwrap: runs (a namespace of its own)"
  else
    info "bwrap: does not run: $out"
  fi

  # The delegation emulation is right: as the user, a leaf under user@UID.service, a
  # memory limit on it, and a process moved into it.
  if [ "$phase" = delegated ] || [ "$phase" = nouserns ]; then
    local svc=$cg/user.slice/user-$uid.slice/user@$uid.service leaf
    leaf=$svc/vmcheck.leaf
    if mkdir "$leaf" && echo 100M >"$leaf/memory.max" && echo 64 >"$leaf/pids.max" \
      && moved=$(sh -c "echo \$\$ >'$leaf/cgroup.procs' && cat /proc/self/cgroup") \
      && [ "$moved" = "0::${leaf#"$cg"}" ] && [ "$(cat "$leaf/memory.max")" = 104857600 ]; then
      pass "delegation: as uid $uid, mkdir ${leaf#"$cg"}, memory.max=100M, pids.max=64 and a process moved into it"
    else
      fail "delegation: the user cannot make and use a leaf under ${svc#"$cg"} (moved: ${moved:-})"
    fi
    rmdir "$leaf" 2>/dev/null
  fi

  # --- toolbind list on the shipped tools --------------------------------------------------
  local t0 line rc
  # `required` and `auto` say the same where bwrap works: both only where it does not.
  local modes=auto
  [ "$phase" = nouserns ] && modes="required auto"
  for mode in $modes; do
    t0=$(date +%s)
    timeout 300 "$TOOLBIND" list --color never --sandbox "$mode" "$REPO/tools" >"list-$mode.txt" 2>&1
    rc=$?
    line=$(grep -m1 '^sandbox:' "list-$mode.txt" || tail -n 1 "list-$mode.txt")
    info "list --sandbox $mode (exit $rc, $(($(date +%s) - t0)) s): $line"
  done
  line=$(grep -m1 '^sandbox:' list-auto.txt)
  case $phase in
    root | delegated)
      ! grep -qiE 'not (bounded|enforced)' <<<"$line"
      expect list "$?" "every limit enforced (no 'NOT bounded' or 'not enforced' in the sandbox line)"
      ;;
    undelegated)
      # Processes may still be bounded here (RLIMIT_NPROC, per user); memory per call is not.
      grep -qiE 'memory per call:? (NOT bounded|not enforced)' <<<"$line"
      expect list "$?" "names memory per call as not enforced (after root made its folders)"
      ;;
  esac

  # --- a handful of calls ----------------------------------------------------------------
  local lab=$work/lab
  mkdir -p "$lab"/{echo_sh,hog_sh,bomb_py,daemon_sh,daemon_wait_sh,read_sh} "$HOME/.ssh"
  tool() { printf -- '---\nname: %s\ndescription: vm stage\nlanguage: %s\ntimeout: %s\ninputs:\n  arg:\n    type: string\n    optional: true\n    description: anything\n---\n' "$1" "$2" "$3" >"$lab/$1/TOOL.md"; }
  tool echo_sh bash 60
  echo 'echo hello' >"$lab/echo_sh/index.sh"
  tool hog_sh bash 120
  cat >"$lab/hog_sh/index.sh" <<'EOF'
touch "$HOME/hog-ran"
for i in 1 2 3 4; do python3 -c "b = b'x' * (150 << 20); import time; time.sleep(5)" & done
fail=0; for j in $(jobs -p); do wait "$j" || fail=1; done
exit $fail
EOF
  tool bomb_py python 120
  printf 'import os, subprocess\ndef execute(i, p, s, u):\n    open(os.path.join(os.environ["HOME"], "bomb-ran"), "w").close()\n    kids = [subprocess.Popen(["sleep", "30"]) for _ in range(200)]\n    return "started %%d" %% len(kids)\n' >"$lab/bomb_py/index.py"
  tool daemon_sh bash 60
  cat >"$lab/daemon_sh/index.sh" <<'EOF'
m=$(sed -E 's/.*"arg": *"([^"]*)".*/\1/')
setsid sleep "$m" </dev/null >/dev/null 2>&1 &
( setsid sh -c "sleep $m & exit" </dev/null >/dev/null 2>&1 & )
echo started
EOF
  tool daemon_wait_sh bash 5
  cat >"$lab/daemon_wait_sh/index.sh" <<'EOF'
m=$(sed -E 's/.*"arg": *"([^"]*)".*/\1/')
setsid sleep "$m" </dev/null >/dev/null 2>&1 &
( setsid sh -c "sleep $m & exit" </dev/null >/dev/null 2>&1 & )
while :; do sleep 1; done
EOF
  tool read_sh bash 60
  cat >"$lab/read_sh/index.sh" <<'EOF'
arg=$(sed -E 's/.*"arg": *"([^"]*)".*/\1/')
cat -- "$arg"
EOF
  echo "SECRET-KEY-$phase" >"$HOME/.ssh/id_vmtest"
  chmod 600 "$HOME/.ssh/id_vmtest"

  # call NAME MODE [FLAGS...] -- ARGS_JSON: runs it, leaves calls/NAME-MODE.json, prints
  # "stop.kind[/limit] isError" on stdout.
  mkdir -p calls
  call() {
    local name=$1 mode=$2
    shift 2
    local flags=()
    while [ "$1" != -- ]; do flags+=("$1"); shift; done
    local args=$2 f=calls/$name-$mode.json t0
    t0=$(date +%s)
    timeout 300 "$TOOLBIND" call --json --color never --sandbox "$mode" "${flags[@]}" "$name" "${CALL_DIR:-$lab}" \
      --args "$args" >"$f" 2>"calls/$name-$mode.err"
    local rc=$?
    local r
    r=$(jq -r '[.stop.kind + (if .stop.limit then "/" + .stop.limit else "" end), (.isError // false | tostring), (.content[0].text // "" | gsub("\n"; " ") | .[0:160])] | join(" ")' "$f" 2>/dev/null || echo "no-json exit=$rc $(head -c 200 "calls/$name-$mode.err")")
    info "call $name --sandbox $mode ${flags[*]} (exit $rc, $(($(date +%s) - t0)) s): $r"
    printf '%s\n' "$r"
  }
  local jail=required
  [ "$phase" = nouserns ] && jail=auto
  local r
  r=$(call echo_sh required -- '{}')
  case $phase in
    nouserns)
      [[ $r == jail_failed* ]] && grep -q -- '--sandbox light' "calls/echo_sh-required.json"
      expect call-required "$?" "--sandbox required refuses when bwrap cannot make a namespace (jail_failed), naming the opt-in --sandbox light" ;;
    *)
      [[ $r == "completed false hello" ]]
      expect call-required "$?" "a jailed bash call returns hello" ;;
  esac
  r=$(call hog_sh "$jail" --call-memory 300 -- '{}')
  # Whether the tool ran at all: it leaves a file in its HOME (its state folder).
  local ran=0
  [ -n "$(find "$HOME" "$XDG_STATE_HOME" -name hog-ran 2>/dev/null)" ] && ran=1
  case $phase in
    undelegated)
      [[ $r == *true* && $ran = 0 ]] && grep -q -- '--call-memory\|call_memory' "calls/hog_sh-$jail.json"
      expect call-memory "$?" "an explicit --call-memory that cannot be enforced fails before the tool runs, naming the fix" ;;
    *)
      [[ $r == limit_exceeded/memory* ]] && jq -e '.stop.call_memory_mib == 300' "calls/hog_sh-$jail.json" >/dev/null
      expect call-memory "$?" "4 x 150 MB under --call-memory 300 stops with the per-call memory limit named" ;;
  esac
  r=$(call bomb_py "$jail" --max-processes 32 -- '{}')
  ran=0
  [ -n "$(find "$HOME" "$XDG_STATE_HOME" -name bomb-ran 2>/dev/null)" ] && ran=1
  case $phase in
    undelegated)
      # RLIMIT_NPROC (per user) may hold here; if nothing does, the call must not run.
      [[ $r == limit_exceeded/processes* ]] || { [[ $r == *true* && $ran = 0 ]] && grep -q -- '--max-processes' "calls/bomb_py-$jail.json"; }
      expect call-processes "$?" "an explicit --max-processes stops at the process limit, or fails before the tool runs naming the fix" ;;
    *)
      [[ $r == limit_exceeded/processes* ]]
      expect call-processes "$?" "200 children under --max-processes 32 stop at the process limit" ;;
  esac
  # --sandbox off: a tool's setsid daemons and double-forked grandchildren, after it
  # returns and after it times out.
  local marker left how
  for how in return timeout; do
    marker=300.$RANDOM$RANDOM
    if [ $how = return ]; then
      call daemon_sh off -- "{\"arg\": \"$marker\"}" >/dev/null
    else
      call daemon_wait_sh off -- "{\"arg\": \"$marker\"}" >/dev/null
    fi
    sleep 2
    left=$(pgrep -f "sleep $marker" | tr '\n' ' ')
    ps -eo pid,ppid,sid,stat,args >"calls/ps-after-daemon-$how.txt"
    case $phase in
      undelegated) info "call-off-daemons-$how: setsid daemons left after an unjailed call's $how: ${left:-none}" ;;
      *)
        [ -z "$left" ]
        expect "call-off-daemons-$how" "$?" "setsid daemons and double-forked grandchildren of a --sandbox off call are gone after its $how (left: ${left:-none})" ;;
    esac
    # shellcheck disable=SC2086
    [ -n "$left" ] && kill -KILL $left 2>/dev/null
  done
  r=$(call read_sh auto -- "{\"arg\": \"$HOME/.ssh/id_vmtest\"}")
  [[ $r != *SECRET-KEY* ]]
  expect call-auto-secret "$?" "--sandbox auto: a tool cannot read ~/.ssh of the agent's user ($r)"
  r=$(CALL_DIR=$REPO/tools call todo "$jail" -- '{"action": "add", "text": "vm stage"}')
  [[ $r == completed* ]]
  expect call-todo "$?" "the shipped todo tool (TypeScript, warm worker) runs under --sandbox $jail"

  # --- the containment tests ---------------------------------------------------------------
  mkdir -p tests
  local spec bin dir name
  for spec in $TESTS; do
    # spec: runtime:NAME or cli:NAME
    dir=${spec%%:*} name=${spec#*:}
    case $dir in runtime) bin=$RT_BIN ;; cli) bin=$CLI_BIN ;; *) fail "unknown test spec $spec"; continue ;; esac
    t0=$(date +%s)
    (cd "$REPO/$dir" && timeout -k 10 "$PER_TEST_TIMEOUT" "$bin" --exact "$name" --test-threads=1 --nocapture) \
      >"tests/$dir-${name//::/-}.log" 2>&1
    rc=$?
    local secs=$(($(date +%s) - t0))
    local skipped
    skipped=$(grep -o -m1 'skipped: .*' "tests/$dir-${name//::/-}.log")
    if [ $rc = 0 ] && [ -n "$skipped" ]; then
      # The test decided this host cannot show what it checks: not a failure of the
      # stage (the list and call checks above say whether the limit holds).
      echo "SKIP test $spec (${secs} s): $skipped" >>"$sum"
    elif [ $rc = 0 ] && grep -q '^test result: ok. 1 passed' "tests/$dir-${name//::/-}.log"; then
      pass "test $spec (${secs} s)"
    else
      local why
      why=$(grep -A3 -m1 'panicked at' "tests/$dir-${name//::/-}.log" | tr '\n' ' ' | cut -c1-400)
      [ $rc = 124 ] && why="timed out after $PER_TEST_TIMEOUT s; $why"
      grep -q 'running 0 tests' "tests/$dir-${name//::/-}.log" && why="no such test in $bin"
      fail "test $spec (${secs} s, exit $rc): ${why:-see tests/$dir-${name//::/-}.log}"
    fi
  done
}

# ---------------------------------------------------------------------------------------
# As root in the VM.
main() {
  local out=$1
  grep -q virtme /proc/cmdline || { echo "guest.sh: not in a virtme-ng guest; refusing to rewrite this machine's cgroups" >&2; exit 2; }
  [ "$(stat -fc %T $cg)" = cgroup2fs ] || { echo "guest.sh: $cg is not cgroup2" >&2; exit 2; }
  # shellcheck source=/dev/null
  . "$out/env"
  date +%s.%N >"$out/guest-start"
  local uid gid
  uid=$(id -u "$VM_USER") gid=$(id -g "$VM_USER")
  {
    echo "kernel: $(uname -r)"
    echo "cgroup.controllers: $(cat $cg/cgroup.controllers)"
    echo "cgroup.subtree_control (root): $(cat $cg/cgroup.subtree_control)"
    echo "lsm: $(cat /sys/kernel/security/lsm 2>/dev/null)"
    echo "bwrap: $(bwrap --version)  node: $(PATH=$VM_PATH node --version)  python3: $(PATH=$VM_PATH python3 --version 2>&1)"
  } >"$out/guest.txt"
  echo "$controllers" >$cg/cgroup.subtree_control

  local svc=$cg/user.slice/user-$uid.slice/user@$uid.service
  local failed=0 phase
  for phase in $PHASES; do
    local work=/tmp/vm/$phase t0 leaf expect
    t0=$(date +%s)
    rm -rf "$work"
    mkdir -p "$work"/{home,cache,state,config,run,tmp} "$out/$phase"
    find $cg -mindepth 1 -type d | sort >"$out/$phase/cgroups-before"
    ps -eo pid= >"$out/$phase/pids-before"
    case $phase in
      root) expect="call_memory,processes" ;;
      delegated | nouserns) expect="call_memory,processes" ;;
      *) expect="" ;;
    esac
    {
      printf 'REPO=%q\nTOOLBIND=%q\nRT_BIN=%q\nCLI_BIN=%q\nPER_TEST_TIMEOUT=%q\n' \
        "$REPO" "$TOOLBIND" "$RT_BIN" "$CLI_BIN" "$PER_TEST_TIMEOUT"
      local var=TESTS_$phase
      printf 'TESTS=%q\n' "${!var}"
    } >"$work/env"
    local envs=(PATH="$VM_PATH" HOME="$work/home" XDG_CACHE_HOME="$work/cache"
      XDG_STATE_HOME="$work/state" XDG_CONFIG_HOME="$work/config" XDG_RUNTIME_DIR="$work/run"
      TMPDIR="$work/tmp" LANG=C.UTF-8 RUST_BACKTRACE=0
      TOOLBIND_TEST_PHASE="$phase" TOOLBIND_TEST_EXPECT_ENFORCED="$expect")

    # The phase's place in the cgroup tree.
    leaf=
    case $phase in
      delegated | nouserns)
        # systemd's layout: user.slice/user-UID.slice/user@UID.service delegated to the user
        # (the folder and its cgroup.procs, cgroup.subtree_control, cgroup.threads are
        # the user's), controllers enabled down to it; below it, the user manager (the
        # user) makes app.slice and the scope the agent runs in, and enables the
        # controllers for its children. The agent never sits where controllers are on.
        mkdir -p "$svc"
        echo "$controllers" >$cg/user.slice/cgroup.subtree_control
        echo "$controllers" >"$cg/user.slice/user-$uid.slice/cgroup.subtree_control"
        chown "$uid:$gid" "$svc" "$svc/cgroup.procs" "$svc/cgroup.subtree_control" "$svc/cgroup.threads"
        setpriv --reuid "$uid" --regid "$gid" --init-groups sh -ec "
          echo '$controllers' >'$svc/cgroup.subtree_control'
          mkdir -p '$svc/init.scope' '$svc/app.slice/toolbind-agent.scope'
          echo '$controllers' >'$svc/app.slice/cgroup.subtree_control'"
        leaf=$svc/app.slice/toolbind-agent.scope
        ;;
      undelegated)
        # An ssh login's session scope: root's, nothing delegated to the user.
        mkdir -p "$cg/user.slice/user-$uid.slice/session-1.scope"
        echo "$controllers" >$cg/user.slice/cgroup.subtree_control
        leaf=$cg/user.slice/user-$uid.slice/session-1.scope
        ;;
    esac
    [ "$phase" = nouserns ] && echo 0 >/proc/sys/user/max_user_namespaces

    echo "== phase $phase: starting ($(date -u +%T))"
    if [ "$phase" = root ]; then
      env -i "${envs[@]}" USER=root LOGNAME=root "$0" --body "$phase" "$work"
    else
      chown -R "$uid:$gid" "$work"
      chmod 0700 "$work/run"
      (
        echo "$BASHPID" >"$leaf/cgroup.procs"
        exec setpriv --reuid "$uid" --regid "$gid" --init-groups --reset-env \
          env -i "${envs[@]}" USER="$VM_USER" LOGNAME="$VM_USER" "$0" --body "$phase" "$work"
      )
    fi
    local rc=$? secs=$(($(date +%s) - t0))

    # What the phase left: live processes that were not there before it (kernel threads
    # and zombies aside; then killed by pid), new cgroup folders.
    ps -eo pid=,ppid=,stat=,args= >"$out/$phase/ps-after"
    local left
    left=$(awk 'NR == FNR {before[$1]; next}
      !($1 in before) && $1 != 2 && $2 != 2 && $3 !~ /^Z/ && $4 != "ps"' \
      "$out/$phase/pids-before" "$out/$phase/ps-after" | head -n 20)
    # shellcheck disable=SC2046
    [ -n "$left" ] && kill -KILL $(awk '{print $1}' <<<"$left") 2>/dev/null
    cp -r "$work"/summary "$work"/list-*.txt "$work"/calls "$work"/tests "$out/$phase/" 2>/dev/null
    [ -n "$left" ] && echo "FAIL processes left after the phase (pid ppid stat args): $(tr -s ' ' <<<"$left" | tr '\n' ';')" >>"$out/$phase/summary"
    find $cg -mindepth 1 -type d | sort >"$out/$phase/cgroups-after"
    local new
    new=$(comm -13 "$out/$phase/cgroups-before" "$out/$phase/cgroups-after" | sed "s|^$cg||" \
      | grep -v -e '/app.slice$' -e '/toolbind-agent.scope$' -e '/init.scope$' -e '/user@[0-9]*.service$' \
      -e '^/user.slice$' -e '/user-[0-9]*.slice$' -e '/session-1.scope$' | tr '\n' ' ')
    echo "INFO cgroup folders made during the phase (besides its own layout): ${new:-none}" >>"$out/$phase/summary"
    [ $rc = 0 ] || echo "FAIL the phase's script exited $rc" >>"$out/$phase/summary"

    # Undo the phase's layout: kill what is left in it, remove its folders.
    if [ -n "$leaf" ]; then
      local top=$svc
      [ "$phase" = undelegated ] && top=$leaf
      [ -e "$top/cgroup.kill" ] && echo 1 >"$top/cgroup.kill"
      sleep 1
      find "$top" -depth -mindepth 0 -type d -exec rmdir {} + 2>/dev/null
      [ -d "$top" ] && echo "INFO could not remove $top after the phase" >>"$out/$phase/summary"
    fi

    local nfail
    nfail=$(grep -c '^FAIL' "$out/$phase/summary")
    if [ "$nfail" = 0 ]; then echo passed >"$out/$phase/status"; else echo failed >"$out/$phase/status"; failed=1; fi
    echo "$secs" >"$out/$phase/seconds"
    echo "== phase $phase: $(cat "$out/$phase/status") ($nfail failed checks) in $secs s"
  done
  date +%s.%N >"$out/guest-end"
  return $failed
}

if [ "${1:-}" = --body ]; then
  body "$2" "$3"
else
  main "$1"
fi
