#!/bin/bash
# The unprivileged path: worldd started as `nobody` (setpriv) builds its
# capsule in a user namespace of its own; cgroups are not writable, so the
# summary says so and the rlimits bound the run.
. "$top_srcdir/tests/tap.sh"
T=$(mktemp -d /tmp/world-capsule-unpriv.XXXXXX)
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
cp "$WORLDD" "$top_builddir/cli/worldd-serve" "$top_builddir/tests/capsule/fixture" "$T/"
if [ "$(id -u)" = 0 ]; then
  if ! command -v setpriv >/dev/null; then skip "setpriv missing" "unprivileged runs"; done_testing; exit; fi
  AS=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
else
  AS=()
fi
# Sanitizer builds of worldd need their runtime options; they travel in the env.
run() {
  printf '%s\n' "$1" > "$T/main.ail"; chmod 644 "$T/main.ail"; shift
  run_capture out err rc "${AS[@]}" "$T/worldd" run --ailang-bin "$T/fixture" --source "$T/main.ail" --input '{"n":1}' "$@"
}
run echo --summary
is "$rc" 0 "unprivileged echo: exit 0"
is "$out" '{"args":"{\"n\":1}","argc":10}' "unprivileged echo: output"
like "$err" "unprivileged: capsule uid/gid 1000 -> host [0-9]+ \(own\)" "summary: own uid mapped into the capsule"
if [ "$(id -u)" = 0 ]; then
  like "$err" "cgroups: memory none, pids none \(.*rlimits remain\)" "summary says cgroups are unavailable and rlimits remain"
else
  ok 0 "summary printed: $err"
fi
run posture
like "$out" '"uid":1000,"gid":1000,"euid":1000,"capget":0,"cap_eff":0,"cap_prm":0,"cap_inh":0,"bnd_sys_admin":0,"nnp":1,"seccomp":2,"pid":2' "unprivileged posture: uid 1000, no caps, nnp, seccomp filter, pid 2 (under the supervisor's agent, pid 1)"
like "$out" '"fds":\[(0,)?1,2\],"root":\[' "unprivileged posture: only fds 0-2"
like "$out" '"proc":0,"etc":0' "unprivileged posture: no host paths"
run "syscall keyctl"
is "$rc" 17 "unprivileged: keyctl denied (exit 17)"
# (the first stderr line says the capsule has no cgroups: see the end)
is "$(printf '%s\n' "$err" | tail -n 1)" "worldd run: syscall denied: keyctl; capsule killed" "unprivileged: denial names keyctl"
run "syscall unshare"
is "$(printf '%s\n' "$err" | tail -n 1)" "worldd run: syscall denied: unshare; capsule killed" "unprivileged: unshare denied and named"
run forkbomb
n=$(printf '%s' "$out" | sed -n 's/.*"forks":\([0-9]*\).*/\1/p')
ok $([ -n "$n" ] && [ "$n" -lt 64 ] && echo 0 || echo 1) "unprivileged fork bomb bounded by RLIMIT_NPROC (got $n forks)"
run membomb
like "$out$err" '"mb":[0-9]+|killed' "unprivileged memory bomb bounded by RLIMIT_AS/DATA ($out$err)"
mb=$(printf '%s' "$out" | sed -n 's/.*"mb":\([0-9]*\).*/\1/p')
ok $([ -z "$mb" ] || [ "$mb" -le 1024 ] && echo 0 || echo 1) "memory bomb got at most 1 GiB ($mb MiB)"
run spin --timeout-ms 500
is "$rc" 11 "unprivileged CPU spin: deadline (exit 11)"
run rootwrite
is "$out" '{"root":0,"root_errno":30,"source":0,"source_errno":13,"cache":1,"cache_errno":0}' "unprivileged: root read-only, cache writable"

# Limits are never silently missing (issue 24, item 4): without cgroups the
# run says so in one line (what is missing, why, the rlimits that remain);
# --require-cgroups refuses before anything runs.
if [ "$(id -u)" = 0 ]; then
  line='^worldd run: capsules get no memory and no pids cgroup \(memory: .*; pids: .*\); rlimits remain: RLIMIT_AS [0-9]+ MiB, RLIMIT_DATA [0-9]+ MiB, RLIMIT_NPROC [0-9]+, RLIMIT_CPU [0-9]+ s, RLIMIT_FSIZE [0-9]+ MiB, RLIMIT_NOFILE [0-9]+$'
  run echo
  is "$rc $out" '0 {"args":"{\"n\":1}","argc":10}' "no cgroups: the run goes on"
  like "$err" "$line" "no cgroups: one stderr line names what is missing and the rlimits that remain"
  run echo --require-cgroups
  is "$rc" 10 "no cgroups, --require-cgroups: refused (exit 10)"
  like "$err" "^worldd run: --require-cgroups: capsules get no memory and no pids cgroup" "... in one line"
  is "$out" "" "... and nothing ran"
  # the daemon too: one start-up line, or with --require-cgroups a refusal
  # before the store is even opened (nothing is created)
  run_capture out err rc "${AS[@]}" "$T/worldd" serve --store "$T/absent.db" --ailang-bin "$T/fixture" --listen 127.0.0.1:0 --require-cgroups
  is "$rc" 10 "serve --require-cgroups without cgroups: refused at start (exit 10)"
  like "$err" "^worldd serve: --require-cgroups: capsules get no memory and no pids cgroup .*; rlimits remain: RLIMIT_AS" "... in one line"
  ok "$([ ! -e "$T/absent.db" ]; echo $?)" "... and no store was created"
  # control: as root here the groups are made, so there is no line and the flag passes
  if [ -n "$(find /sys/fs/cgroup -maxdepth 2 -name memory -type d 2>/dev/null | head -1)" ]; then
    printf 'echo\n' > "$T/main.ail"
    run_capture out err rc "$T/worldd" run --require-cgroups --ailang-bin "$T/fixture" --source "$T/main.ail" --input '{"n":1}'
    is "$rc $err" "0 " "control: as root the capsule gets its groups: no line, --require-cgroups runs"
  else
    skip "no memory cgroup hierarchy here" "control: as root the capsule gets its groups"
  fi
else
  skip "not root: cannot compare with a run that has cgroups" "no cgroups: the run goes on"
fi
done_testing
