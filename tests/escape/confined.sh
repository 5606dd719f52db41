#!/bin/bash
# Escape suite, confined: the probe runs as the interpreter inside a capsule
# (`worldd run`), once per attempt, as root and as an unprivileged user
# (uid 65534 via setpriv: the user-namespace path). Every attempt must be
# blocked, by a returned error or by the filter (the run then fails with
# exit 17 naming the syscall); the resource attempts must end by the
# capsule's limits or deadline with the right error; nothing may reach the
# host (listener hits, victims, host files, mounts, hostname, clock, stray
# processes). See docs/escape-suite.md.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/escape/lib.sh"
if ! esc_have_run; then
  skip "worldd run is not available yet" "confined escape attempts"
  done_testing
  exit $?
fi
esc_setup
before=$(esc_snapshot)
clock_before=$(esc_clock_offset)
"$WORLDD" profile show transition --format json >"$ESC_WORK/profile.json" 2>"$ESC_WORK/profile.err" \
  || diag "no profile JSON: $(cat "$ESC_WORK/profile.err")"

names=$("$PROBE" list | awk '$2 !~ /resource/ {printf "%s,", $1}')
for user in $(esc_users); do
  esc_judge attempts --worldd "$WORLDD" --bin "$ESC_BIN" --source "$ESC_SRC" --params "$(esc_params)" \
    --user "$user" --names "$names" --cwd "$ESC_WORK/tmp"
  esc_judge resource --worldd "$WORLDD" --bin "$ESC_BIN" --source "$ESC_SRC" --params "$(esc_params)" \
    --user "$user" --profile "$ESC_WORK/profile.json" --cwd "$ESC_WORK/tmp"
done

# The daemon's capsule maker (`worldd run --spawner`): the capsule spawner,
# and as root the shared network namespace and the template mount namespace
# (the capsule's root moved over the template's; no host mount ever in its
# namespace). As the first user: root where the suite runs as root.
first_user=$(esc_users | cut -d' ' -f1)
esc_judge attempts --spawner --worldd "$WORLDD" --bin "$ESC_BIN" --source "$ESC_SRC" --params "$(esc_params)" \
  --user "$first_user" --names "$names" --cwd "$ESC_WORK/tmp"
esc_judge resource --spawner --worldd "$WORLDD" --bin "$ESC_BIN" --source "$ESC_SRC" --params "$(esc_params)" \
  --user "$first_user" --profile "$ESC_WORK/profile.json" --cwd "$ESC_WORK/tmp"

# The other profiles: tool-run (adds /dev/null, /dev/zero, /dev/urandom) and
# source-check (`worldd check`: the attempt travels in the source), as the
# first user only, to keep the pass short.
esc_judge attempts --no-batch --worldd "$WORLDD" --bin "$ESC_BIN" --source "$ESC_SRC" --params "$(esc_params)" \
  --user "$first_user" --names "$names" --cwd "$ESC_WORK/tmp" --profile-name tool-run
esc_judge attempts --no-batch --verb check --worldd "$WORLDD" --bin "$ESC_BIN" --source "$ESC_SRC" \
  --params "$(esc_params)" --user "$first_user" --names "$names" --cwd "$ESC_WORK/tmp"
# The product path: `worldd invoke` runs the call through the supervisor
# (admission, the capsule's agent, the frame protocol).
if "$WORLDD" invoke --help >/dev/null 2>&1; then
  esc_judge attempts --no-batch --verb invoke --worldd "$WORLDD" --bin "$ESC_BIN" --source "$ESC_SRC" \
    --params "$(esc_params)" --user "$first_user" --names "$names" --cwd "$ESC_WORK/tmp"
  esc_judge resource --verb invoke --worldd "$WORLDD" --bin "$ESC_BIN" --source "$ESC_SRC" \
    --params "$(esc_params)" --user "$first_user" --profile "$ESC_WORK/profile.json" --cwd "$ESC_WORK/tmp"
else
  skip "worldd invoke is not available" "confined attempts through the supervisor"
fi

# The judge itself can fail: pointed at a stand-in for `worldd run` that
# confines nothing, each of these attempts must be judged an escape.
meta=host_etc_passwd,host_secret_file,dotdot_cwd,proc_self,net_tcp_host,pid_namespace,caps_held,no_new_privs,seccomp_mode
verdicts=$("$PY" "$JUDGE" attempts --no-batch --worldd "$top_srcdir/tests/escape/unconfined-run.sh" \
  --bin "$ESC_BIN" --source "$ESC_SRC" --params "$(esc_params)" --user self --names "$meta" --cwd "$ESC_WORK/tmp" 2>&1)
n_meta=$(echo "$meta" | tr ',' '\n' | grep -c .)
n_caught=$(printf '%s\n' "$verdicts" | grep -c '^not ok')
is "$n_caught" "$n_meta" "without a capsule, the judge reports every one of $n_meta attempts as an escape"
[ "$n_caught" = "$n_meta" ] || diag "$verdicts"
: >"$ESC_WORK/serve/hits" # the stand-in's TCP connection is expected

# Nothing reached the host.
[ ! -s "$ESC_WORK/serve/hits" ]; ok $? "no connection or datagram reached the host listener"
[ -s "$ESC_WORK/serve/hits" ] && diag "hits: $(sort "$ESC_WORK/serve/hits" | uniq -c | tr '\n' ' ')"
esc_alive "$ESC_KILLME"; ok $? "the host process the capsule tried to kill is alive"
esc_alive "$ESC_VICTIM"; ok $? "the host process the capsule tried to trace is alive"
esc_alive "$ESC_SERVE_PID"; ok $? "the host listener is alive"
ipcs -m -i "$SHM_ID" >/dev/null 2>&1; ok $? "the host shm segment is intact"
left=$(ls -A "$ESC_WORK/tmp")
is "$left" "" "worldd left nothing in its working directory"
sleep 0.2
after=$(esc_snapshot)
is "$after" "$before" "host unchanged: mounts, hostname, reboot setting, host dir, no tagged process"
clock_after=$(esc_clock_offset)
esc_clock_same "$clock_before" "$clock_after"
ok $? "the host clock was not stepped (realtime - boottime: $clock_before, then $clock_after)"
done_testing
