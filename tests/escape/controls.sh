#!/bin/bash
# Escape suite, controls: every attempt of the probe, run unconfined, must get
# through. This is what makes the confined results mean something: a
# "blocked" inside the capsule is the capsule's doing, not a probe that could
# never succeed. Controls that change state (mounts, device nodes, hostname,
# reboot setting, fork bomb) run only inside a throwaway namespace with a
# private tmpfs; the probe itself refuses them elsewhere. The host is
# compared before and after. See docs/escape-suite.md.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/escape/lib.sh"
esc_setup

before=$(esc_snapshot)
clock_before=$(esc_clock_offset)
P=$(esc_params)

# The list of attempts comes from the probe itself.
mapfile -t ATTEMPTS < <("$PROBE" list)
n_attempts=0
for line in "${ATTEMPTS[@]}"; do
  case "${line#* }" in *resource*) ;; *) n_attempts=$((n_attempts + 1)) ;; esac
done
[ "$n_attempts" -ge 40 ]
ok $? "the probe has at least 40 escape attempts besides the resource ones ($n_attempts)"

# control NAME FLAGS [unpriv]: run one control and record the verdict.
control() {
  local name=$1 flags=$2 who=${3:-root} out rc
  if [ "$who" = unpriv ]; then
    out=$(cd "$ESC_WORK/scratch" && setpriv --reuid=65534 --regid=65534 --clear-groups \
      "$ESC_BIN" control "$name" "$P" 2>&1 7</etc/hostname)
    rc=$?
  else
    case "$flags" in
      *state*) out=$(esc_private "$ESC_BIN" control "$name" "$P" 2>&1); rc=$? ;;
      *) out=$(cd "$ESC_WORK/scratch" && "$ESC_BIN" control "$name" "$P" 2>&1 7</etc/hostname); rc=$? ;;
    esac
  fi
  case "$out" in
    unshare:*|mount:*) skip "no throwaway namespace here: $out" "control ($who) $name"; return ;;
  esac
  case $rc in
    0) ok 0 "control ($who) $name gets through unconfined" ;;
    3) skip "this kernel lacks it: ${out#*: }" "control ($who) $name" ;;
    *) ok 1 "control ($who) $name gets through unconfined"; diag "exit $rc: $out" ;;
  esac
}

for line in "${ATTEMPTS[@]}"; do
  name=${line%% *} flags=${line#* }
  case "$flags" in *resource*) continue ;; esac
  if [[ "$flags" == *root* && $ESC_IS_ROOT -ne 1 ]]; then
    skip "needs root" "control $name"
    continue
  fi
  case "$name" in
    kill_host)
      control "$name" "$flags"
      esc_dies "$ESC_KILLME"; ok $? "the kill_host control really killed its host victim"
      ESC_KILLME=$(esc_sleeper); esc_track "$ESC_KILLME"; P=$(esc_params)
      ;;
    host_write)
      control "$name" "$flags"
      [ -f "$ESC_WORK/hostdir/escape-probe-wrote" ]; ok $? "the host_write control really wrote into the host directory"
      rm -f "$ESC_WORK/hostdir/escape-probe-wrote"
      ;;
    *) control "$name" "$flags" ;;
  esac
done

# The unprivileged path: attempts that need no privilege get through for
# uid 65534 too, so the unprivileged capsule pass is measured against them.
if [ $ESC_IS_ROOT -eq 1 ] && command -v setpriv >/dev/null; then
  for line in "${ATTEMPTS[@]}"; do
    name=${line%% *} flags=${line#* }
    case "$flags" in *resource*|*root*|*state*) continue ;; esac
    control "$name" "$flags" unpriv
    [ "$name" = host_write ] && rm -f "$ESC_WORK/hostdir/escape-probe-wrote"
  done
else
  skip "not root or no setpriv" "unprivileged controls"
fi

# Every listener hit came from a control (4 network controls per user).
hits=$(sort "$ESC_WORK/serve/hits" 2>/dev/null | uniq -c | awk '{printf "%s:%s ", $2, $1}')
like "$hits" "tcp:[0-9]+ .*udp:[0-9]+" "the network controls reached the host listener ($hits)"

# Resource controls: unconfined, each runs to its safety cap (the confined
# runs must stop well before). Small caps keep this quick.
rc_control() {
  local name=$1 extra=$2 out rc
  case "$name" in
    fork_bomb) out=$(esc_private "$ESC_BIN" control "$name" "$(esc_params "$extra")" 2>&1 >/dev/null); rc=$? ;;
    *) out=$(cd "$ESC_WORK/scratch" && "$ESC_BIN" control "$name" "$(esc_params "$extra")" 2>&1 >/dev/null); rc=$? ;;
  esac
  is "$rc" 0 "resource control $name runs unconfined to its safety cap"
  [ "$rc" -eq 0 ] || diag "$out"
}
rc_control fork_bomb cap_procs=96
rc_control memory_bomb cap_mb=96
rc_control disk_fill cap_mb=24
rc_control cpu_spin cap_ms=300
rc_control sleep_forever cap_ms=300
rc_control stdout_flood cap_mb=12
rc_control stderr_flood cap_mb=1
[ ! -e "$ESC_WORK/scratch/escape-probe-fill" ]; ok $? "disk_fill control removed its file"

# The host is as it was.
sleep 0.2
after=$(esc_snapshot)
is "$after" "$before" "host unchanged: mounts, hostname, reboot setting, host dir, no tagged process"
clock_after=$(esc_clock_offset)
esc_clock_same "$clock_before" "$clock_after"
ok $? "the host clock was not stepped (realtime - boottime: $clock_before, then $clock_after)"
esc_alive "$ESC_VICTIM"; ok $? "the ptrace/process_vm victim is still alive"
done_testing
