#!/bin/bash
# Nothing outlives an interrupted run (issue 12 item 1): SIGINT, SIGTERM,
# SIGHUP and SIGKILL of `worldd run` and `worldd invoke` while a capsule
# sleeps. SIGINT/SIGTERM/SIGHUP: the process kills the capsule, removes its
# cgroups, says "interrupted" in one line and exits 130/143/129 (issue 24
# item 5). Ctrl-C typed at a pseudo-terminal (tests/capsule/ctrlc.py) reaches
# only worldd, never the capsule (its own session), (worldd call installs the same handler: cli/verbs_call.c).
# SIGKILL: the groups stay (the control: nothing can clean up inside the
# killed process) until the next verb that makes capsules sweeps them.
. "$top_srcdir/tests/tap.sh"
FIX="$top_builddir/tests/capsule/fixture"
T=$(mktemp -d /tmp/world-capsule-intr.XXXXXX)
trap 'rm -rf "$T"' EXIT
printf 'sleep\n' > "$T/sleep.ail"
printf 'noop\n' > "$T/noop.ail"

# groups of maker PID (world-capsule-PID-START-N), anywhere in the tree
groups_of() { find /sys/fs/cgroup -maxdepth 6 -type d -name "world-capsule-$1-*" 2>/dev/null | sort; }
children() { # the pids whose parent is $1 (the capsule's init is worldd's child)
  local c
  for c in /proc/[0-9]*/stat; do
    awk -v p="$1" '{ s = $0; sub(/^.*\) /, "", s); split(s, f, " "); if (f[2] == p) { sub(/^\/proc\//, "", FILENAME); sub(/\/stat$/, "", FILENAME); print FILENAME } }' "$c" 2>/dev/null
  done
}

running() { # those of the given pids still running (not gone, not a zombie)
  local p st
  for p in "$@"; do
    st=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f1)
    [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ] && printf ' %s' "$p"
  done
}

if [ "$(id -u)" != 0 ] && [ -z "$(find /sys/fs/cgroup -maxdepth 3 -name 'cgroup.procs' -writable 2>/dev/null | head -1)" ]; then
  skip "no writable cgroup hierarchy" "interrupt tests"
  done_testing
  exit 0
fi

for verb in run invoke; do
  # a deadline far beyond the test (invoke is run's alias: one timeout flag)
  long=(--timeout-ms 60000)
  for sig in INT TERM HUP KILL; do
    # a background job of a script starts with SIGINT ignored: give it
    # the default disposition an interactive command has
    env --default-signal=INT,TERM,HUP "$WORLDD" "$verb" --ailang-bin "$FIX" --source "$T/sleep.ail" --input '{}' \
      "${long[@]}" > "$T/out" 2> "$T/err" &
    pid=$!
    # wait (bounded) until the capsule's groups exist and its init runs
    for _ in $(seq 1 200); do
      [ -n "$(groups_of "$pid")" ] && [ -n "$(children "$pid")" ] && break
      sleep 0.05
    done
    before=$(groups_of "$pid" | wc -l)
    inits=$(children "$pid")
    [ "$before" -ge 1 ] && [ -n "$inits" ]
    ok $? "$verb, SIG$sig: control: the running capsule (init $inits) has its groups ($before)"
    kill -s "$sig" "$pid"
    wait "$pid"
    rc=$?
    sigexit=$((128 + $(kill -l "$sig")))
    is "$rc" "$sigexit" "$verb, SIG$sig: worldd died of the signal (status $rc)"
    left=$(groups_of "$pid")
    if [ "$sig" = KILL ]; then
      [ -n "$left" ]
      ok $? "$verb, SIGKILL: control: the killed process left its groups behind"
      # the capsules died with their maker (PR_SET_PDEATHSIG), so the next
      # verb that makes capsules sweeps the groups
      run_capture out err rc "$WORLDD" "$verb" --ailang-bin "$FIX" --source "$T/noop.ail" --input '{}'
      is "$rc" 0 "$verb, SIGKILL: the next $verb runs (exit $rc: $err)"
      left=$(groups_of "$pid")
      is "$left" "" "$verb, SIGKILL: the next $verb removed the stale groups"
    else
      is "$left" "" "$verb, SIG$sig: no world-capsule-$pid-* group left"
      like "$(cat "$T/err")" "^worldd $verb: interrupted by SIG$sig: its capsules were killed and their cgroups removed$" \
        "$verb, SIG$sig: one line says it was interrupted"
    fi
    # (the reparented zombie is reaped by whoever adopted it: not running is enough)
    for _ in $(seq 1 100); do [ -z "$(running $inits)" ] && break; sleep 0.02; done
    is "$(running $inits)" "" "$verb, SIG$sig: the capsule's init is not running"
  done
done

# Ctrl-C at a terminal: worldd is the terminal's foreground process group,
# the capsule is not (control: it is running, in another session).
sid_of() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f4; }
ctrlc() { # ctrlc LABEL CMD...: types ^C once the capsule runs; sets rc, err, inits
  local label=$1; shift
  rm -f "$T/go" "$T/ptypid"
  python3 "$top_srcdir/tests/capsule/ctrlc.py" --out "$T/out" --err "$T/err" --pid "$T/ptypid" --go "$T/go" -- "$@" &
  local py=$!
  for _ in $(seq 1 400); do [ -s "$T/ptypid" ] && break; sleep 0.05; done
  pid=$(cat "$T/ptypid")
  for _ in $(seq 1 400); do
    inits=$(children "$pid")
    [ -n "$(groups_of "$pid")" ] && [ -n "$inits" ] && [ -n "$(children "$inits")" ] && break
    sleep 0.05
  done
  local isid; isid=$(sid_of "${inits%%$'\n'*}")
  [ -n "$inits" ] && [ -n "$isid" ] && [ "$isid" != "$(sid_of "$pid")" ]
  ok $? "$label: control: the capsule (init $inits) runs, in a session ($isid) other than the terminal's ($(sid_of "$pid"))"
  touch "$T/go"
  wait "$py"
  rc=$?
  err=$(cat "$T/err")
}
export TMPDIR=$T/tmp; mkdir -p "$TMPDIR"
ctrlc "run, ^C" "$WORLDD" run --ailang-bin "$FIX" --source "$T/sleep.ail" --input '{}' --timeout-ms 60000
is "$rc" 130 "run, ^C: exit 130 (not 14: the interpreter never saw the ^C)"
like "$err" "^worldd run: interrupted by SIGINT: its capsules were killed and their cgroups removed$" "run, ^C: one line says so"
is "$(groups_of "$pid")" "" "run, ^C: no group left"
for _ in $(seq 1 100); do [ -z "$(running $inits)" ] && break; sleep 0.02; done
is "$(running $inits)" "" "run, ^C: the capsule's init is not running"
is "$(ls -A "$TMPDIR")" "" "run, ^C: no temporary file or directory left"

is "$(ls -A "$TMPDIR")" "" "no temporary file or directory left"
unset TMPDIR

# A caller's own handler is left alone: with SIGTERM ignored, worldd lives on.
( trap '' TERM; exec "$WORLDD" run --ailang-bin "$FIX" --source "$T/sleep.ail" --input '{}' --timeout-ms 1500 ) \
  > /dev/null 2>&1 &
pid=$!
sleep 0.5
kill -TERM "$pid" 2>/dev/null
wait "$pid"
is "$?" 11 "an ignored SIGTERM stays ignored: the run ends at its deadline (exit 11)"
is "$(groups_of "$pid")" "" "and leaves no group"
done_testing
