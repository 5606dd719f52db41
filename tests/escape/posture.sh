#!/bin/bash
# Escape suite, posture: the probe, as the interpreter inside a capsule,
# reports its credentials, capabilities, no_new_privs, seccomp mode,
# namespaces, fds, environment, root, hostname and rlimits; the same process
# is also read from the host's /proc while it lingers. Both are compared with
# `worldd profile show transition --format json`, as root and as uid 65534.
# The control: the same report taken unconfined differs where it must.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/escape/lib.sh"
esc_setup

# Control: the posture reader sees the unconfined state as it is.
ctl=$("$ESC_BIN" posture 2>&1)
like "$ctl" '"seccomp":0' "control: unconfined posture reads seccomp mode 0"
like "$ctl" '"no_new_privs":0' "control: unconfined posture reads no_new_privs 0"
if [ "$ESC_IS_ROOT" -eq 1 ]; then
  unlike "$ctl" '"effective":"0x0"' "control: unconfined posture as root reads a non-empty effective set"
fi
like "$ctl" '"namespaces":\{"cgroup":[0-9]+' "control: namespace inodes readable through pidfd ioctls"

if ! esc_have_run; then
  skip "worldd run is not available yet" "confined posture"
  done_testing
  exit $?
fi
if ! "$WORLDD" profile show transition --format json >"$ESC_WORK/profile.json" 2>"$ESC_WORK/profile.err"; then
  ok 1 "worldd profile show transition --format json"; diag "$(cat "$ESC_WORK/profile.err")"
  done_testing
  exit $?
fi
for user in $(esc_users); do
  esc_judge posture --worldd "$WORLDD" --bin "$ESC_BIN" --source "$ESC_SRC" --params "$(esc_params)" \
    --user "$user" --profile "$ESC_WORK/profile.json" --cwd "$ESC_WORK/tmp"
done
# The judge can fail: against a stand-in for `worldd run` that confines
# nothing, the checks of capabilities, no_new_privs, seccomp and identity
# must all fail.
verdicts=$("$PY" "$JUDGE" posture --worldd "$top_srcdir/tests/escape/unconfined-run.sh" --bin "$ESC_BIN" \
  --source "$ESC_SRC" --params "$(esc_params)" --user self --profile "$ESC_WORK/profile.json" --cwd "$ESC_WORK/tmp" 2>&1)
caught=$(printf '%s\n' "$verdicts" | grep '^not ok' | grep -Ec 'capability set|no_new_privs|seccomp filter mode|inside ids')
want=4
[ "$ESC_IS_ROOT" -eq 1 ] || want=3 # a user whose uid is the inside id would pass the identity check
[ "$caught" -ge "$want" ]
ok $? "without a capsule, the posture judge fails capabilities, no_new_privs, seccomp and identity ($caught of 4)"
[ "$caught" -ge "$want" ] || diag "$verdicts"

# The product path (`worldd invoke`, through the supervisor), first user.
if "$WORLDD" invoke --help >/dev/null 2>&1; then
  esc_judge posture --verb invoke --worldd "$WORLDD" --bin "$ESC_BIN" --source "$ESC_SRC" --params "$(esc_params)" \
    --user "$(esc_users | cut -d' ' -f1)" --profile "$ESC_WORK/profile.json" --cwd "$ESC_WORK/tmp"
fi
done_testing
