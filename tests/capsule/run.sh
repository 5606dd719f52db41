#!/bin/bash
# worldd run / worldd check through the CLI, as root (the capsule user is
# mapped to the dedicated host id range): every outcome has its own exit
# code and one-line error; each denial names the syscall.
. "$top_srcdir/tests/tap.sh"
FIX="$top_builddir/tests/capsule/fixture"
T=$(mktemp -d /tmp/world-capsule-run.XXXXXX)
trap 'rm -rf "$T"' EXIT

groups() { find /sys/fs/cgroup -maxdepth 6 -type d -name "world-capsule-*" 2>/dev/null | sort; }
groups_before=$(groups)
# Every worldd this test starts records its pid, so the final check judges
# only groups made by this test's own processes: tests running beside it may
# SIGKILL theirs on purpose and leave groups for the next sweep.
REAL_WORLDD=$WORLDD
WORLDD=$T/worldd-traced
printf '#!/bin/sh\necho $$ >> "%s/pids"\nexec "%s" "$@"\n' "$T" "$REAL_WORLDD" > "$WORLDD"
chmod +x "$WORLDD"
: > "$T/pids"

# run SOURCE_TEXT [extra flags...]: sets out err rc
run() {
  printf '%s\n' "$1" > "$T/main.ail"; shift
  run_capture out err rc "$WORLDD" run --ailang-bin "$FIX" --source "$T/main.ail" --input '{"a":[1,"x"]}' "$@"
}

run echo
is "$rc" 0 "echo: exit 0"
is "$out" '{"args":"{\"a\":[1,\"x\"]}","argc":10}' "echo: output object printed, input staged as a JSON string literal"
run echo --summary
like "$err" "capsule profile transition; interpreter sha256:[0-9a-f]{64}" "--summary names the profile and the interpreter ref"
like "$err" "mounts: caller's copied \(old root detached\)" "a one-shot run copies this process's mount table and detaches it"
# the attach-wait report follows the host's own state (docs/security.md §7):
# favordynmods on some cgroup root, or v1 groups without it
if grep -q ' - cgroup2\? .*favordynmods' /proc/self/mountinfo; then
  like "$err" "cgroups: memory v[12], pids v[12] \(favordynmods: attaches never wait\)" "--summary: favordynmods is on here, and says so"
elif printf '%s' "$err" | grep -q "cgroups: memory v1\|pids v1"; then
  like "$err" "\(v1 without favordynmods: an attach after a quiet spell waits ~10 ms for an RCU grace period; docs/security.md\)" \
    "--summary: v1 groups without favordynmods, and says so"
else
  unlike "$err" "favordynmods" "--summary: no v1 group used, nothing said of favordynmods"
fi
if [ "$(id -u)" = 0 ]; then
  like "$err" "root mode: capsule uid/gid 1000 -> host 18[0-9]{8}" "as root the capsule user maps to the dedicated range"
else
  skip "not root" "as root the capsule user maps to the dedicated range"
fi
# --spawner: made as worldd serve makes each capsule (supervisor/spawner.h):
# as root with the shared network namespace and the template mount namespace
run echo --spawner --summary
is "$rc" 0 "--spawner: echo exits 0"
is "$out" '{"args":"{\"a\":[1,\"x\"]}","argc":10}' "--spawner: the same output"
if [ "$(id -u)" = 0 ]; then
  like "$err" "mounts: template \(root moved over it\)" "--spawner as root: cloned from the template mount namespace"
  like "$err" "net: shared empty namespace" "--spawner as root: the shared empty network namespace"
else
  like "$err" "mounts: caller's copied" "--spawner unprivileged: no template (root only)"
fi
run "syscall keyctl" --spawner
is "$err" "worldd run: syscall denied: keyctl; capsule killed" "--spawner: a denied syscall is named as without it (exit $rc)"
printf '{"b":true}' > "$T/in.json"
printf 'echo\n' > "$T/main.ail"
run_capture out err rc "$WORLDD" run --ailang-bin "$FIX" --source "$T/main.ail" --input-file "$T/in.json"
is "$out" '{"args":"{\"b\":true}","argc":10}' "--input-file works"

run noop;     is "$rc" 0 "noop: exit 0";  is "$out" "{}" "noop: {}"
run nonjson;  is "$rc" 13 "non-JSON output: exit 13"; like "$err" "^worldd run: transition output is not a JSON object$" "non-JSON: one line"
run array;    is "$rc" 13 "a JSON array is not an object: exit 13"
run fail;     is "$rc" 14 "interpreter failure: exit 14"; like "$err" "interpreter exited with status 1 in the pure run phase: Error: RT001 boom" "failure shows the interpreter's first stderr line"
run spin --timeout-ms 700;  is "$rc" 11 "CPU spin: deadline exit 11"; like "$err" "^worldd run: pure run phase deadline \\(700 ms\\) passed; capsule killed$" "deadline message (the supervisor's)"
run sleep --timeout-ms 500; is "$rc" 11 "sleeping forever: deadline exit 11"
run flood;    is "$rc" 12 "stdout flood: output cap exit 12"; like "$err" "interpreter stdout exceeded 8388608 bytes" "flood message"
# stderr over its 8 MiB cap fails the run, as it does for worldd invoke (one
# path: the supervisor); so does --profile tool-run (a supervisor tool run)
run errflood; is "$rc" 12 "stderr flood: output cap exit 12"; like "$err" "capsule stderr exceeded 8388608 bytes; capsule killed" "stderr flood message"
run errflood --profile tool-run; is "$rc" 12 "stderr flood, tool-run profile: exit 12"; like "$err" "capsule stderr exceeded 8388608 bytes; capsule killed" "tool-run stderr flood message (the supervisor's)"
run echo --profile tool-run; is "$rc" 0 "tool-run profile: echo runs"; is "$out" '{"args":"{\"a\":[1,\"x\"]}","argc":10}' "tool-run profile: output"
# --profile tool-run is a supervisor tool run: the same outcomes and codes
run spin --profile tool-run --timeout-ms 500; is "$rc" 11 "tool-run: CPU spin ends at the deadline (exit 11)"; like "$err" "^worldd run: tool run deadline \(500 ms\) passed; capsule killed$" "tool-run deadline message"
run nonjson --profile tool-run; is "$rc" 13 "tool-run: non-JSON output: exit 13"
run fail --profile tool-run; is "$rc" 14 "tool-run: interpreter failure: exit 14"; like "$err" "exited with status 1 in the tool run: Error: RT001 boom" "tool-run failure message"
run "syscall keyctl" --profile tool-run; is "$rc" 17 "tool-run: denied syscall: exit 17"; is "$err" "worldd run: syscall denied: keyctl; capsule killed" "tool-run: the error names the syscall"
run echo --profile tool-run --summary; like "$err" "capsule profile tool-run; interpreter sha256:" "tool-run --summary names the profile"
mkdir -p "$T/wt"
run echo --profile tool-run --worktree "$T/wt"; is "$rc" 0 "tool-run with --worktree runs"
run echo --worktree "$T/wt"; is "$rc" 2 "--worktree without --profile tool-run: usage exit 2"
ln -s "$T/wt" "$T/wt-link"
run echo --profile tool-run --worktree "$T/wt-link"; is "$rc" 3 "--worktree given as a symlink: refused (exit 3)"; like "$err" "symlink, which is refused" "symlinked worktree message"
run echo --profile tool-run --worktree "$T/no-such-dir"; is "$rc" 4 "missing --worktree: exit 4"
run echo --profile source-check; is "$rc" 2 "--profile source-check is for worldd check: usage exit 2"
run big;      is "$rc" 12 "2 MiB output object: exit 12"; like "$err" "over the 1048576-byte cap" "output cap message"
run membomb;  is "$rc" 14 "memory bomb: killed (exit 14)"; like "$err" "killed by signal|memory" "memory bomb reported"
run forkbomb; is "$rc" 0 "fork bomb: bounded, the capsule survives"
n=$(printf '%s' "$out" | sed -n 's/.*"forks":\([0-9]*\).*/\1/p')
ok $([ -n "$n" ] && [ "$n" -lt 64 ] && echo 0 || echo 1) "fork bomb: fewer than 64 forks succeed (got $n)"

for probe in keyctl unshare socket mount ptrace bpf; do
  run "syscall $probe"
  is "$rc" 17 "$probe: exit 17"
  is "$err" "worldd run: syscall denied: $probe; capsule killed" "$probe: the error names the syscall"
done
run "syscall tiocsti";     is "$err" "worldd run: syscall denied: ioctl(TIOCSTI); capsule killed" "TIOCSTI with junk upper bits is denied and named"
run "syscall clone-newns"; is "$rc" 17 "clone with CLONE_NEWNS denied"
run "syscall x32";         is "$rc" 14 "x32 syscall kills the process"; like "$err" "killed by SIGSYS: a syscall of a non-native ABI \\(x32 or i386\\) was refused" "x32: killed by SIGSYS, named as the non-native ABI"
printf 'syscall int80\n' > "$T/main.ail"
ctl=$(cd "$T" && "$FIX" run x main.ail 2>&1)
if printf '%s' "$ctl" | grep -q '"errno":0'; then
  ok 0 "control: an i386 int 0x80 getpid works unconfined ($ctl)"
  run "syscall int80"; is "$rc" 14 "i386 int 0x80 kills the confined process"; like "$err" "killed by SIGSYS: a syscall of a non-native ABI \\(x32 or i386\\) was refused" "i386 entry: killed by SIGSYS, named as the non-native ABI"
else
  skip "this kernel has no i386 emulation ($ctl)" "i386 int 0x80 control"
  skip "no i386 emulation" "i386 int 0x80 kills the confined process"; skip "no i386 emulation" "i386 reported"
fi
run "syscall unknown";     is "$out" '{"rc":-1,"errno":38}' "a syscall number unknown to libseccomp answers ENOSYS and the run continues"
run "syscall clone3";      is "$out" '{"rc":-1,"errno":38}' "clone3 answers ENOSYS (fallback to clone)"
run rootwrite
is "$out" '{"root":0,"root_errno":30,"source":0,"source_errno":13,"cache":1,"cache_errno":0}' "root read-only (EROFS), source not writable, cache writable"
run execcache; is "$out" '{"rc":-1,"errno":13}' "a binary written to the cache cannot be executed (EACCES)"

# the pin through the CLI
run noop --ailang-ref sha256:0000000000000000000000000000000000000000000000000000000000000000
is "$rc" 15 "wrong --ailang-ref: exit 15"
like "$err" "^worldd run: interpreter hash mismatch: expected sha256:0{64} got sha256:[0-9a-f]{64}" "mismatch names both refs"
ref=$(sha256sum "$FIX" | cut -d' ' -f1)
run noop --ailang-ref "sha256:$ref"; is "$rc" 0 "matching --ailang-ref runs"

# usage errors
run_capture out err rc "$WORLDD" run --ailang-bin "$FIX" --input '{}'
is "$rc" 2 "missing --source: usage exit 2"
run_capture out err rc "$WORLDD" run --ailang-bin "$FIX" --source "$T/main.ail" --input '{bad'
is "$rc" 3 "input not JSON: exit 3"
run_capture out err rc "$WORLDD" run --ailang-bin "$FIX" --source "$T/main.ail" --input '[1]'
is "$rc" 3 "input not a JSON object: exit 3"
run_capture out err rc "$WORLDD" run --ailang-bin "$FIX" --source "$T/main.ail" --input '[1]' --profile tool-run
is "$rc" 3 "input not a JSON object, tool-run profile: exit 3"
run_capture out err rc "$WORLDD" run --ailang-bin "$FIX" --source "$T/nope.ail" --input '{}'
is "$rc" 4 "missing source: exit 4"
run_capture out err rc "$WORLDD" run --help
like "$out" "17  the seccomp filter stopped a syscall" "--help documents the exit codes"

# worldd check
printf 'module x\n' > "$T/ok.ail"
run_capture out err rc "$WORLDD" check --ailang-bin "$FIX" --source "$T/ok.ail"
is "$rc" 0 "check: accepted source exits 0"; like "$out" "^accepted: " "check: prints accepted"
printf 'refuse me\n' > "$T/bad.ail"
run_capture out err rc "$WORLDD" check --ailang-bin "$FIX" --source "$T/bad.ail"
is "$rc" 19 "check: refused source exits 19"
like "$err" "source refused: .*Error: PAR001 refused by fixture" "check: refusal shows the diagnostic"
printf 'exec spin\n' > "$T/spin.ail"
run_capture out err rc "$WORLDD" check --ailang-bin "$FIX" --source "$T/spin.ail" --timeout-ms 600
is "$rc" 11 "check: deadline exit 11"; like "$err" "source check phase deadline \\(600 ms\\)" "check: deadline message"
printf 'exec syscall keyctl\n' > "$T/deny.ail"
run_capture out err rc "$WORLDD" check --ailang-bin "$FIX" --source "$T/deny.ail"
is "$err" "worldd check: syscall denied: keyctl; capsule killed" "check: a denied syscall is named (exit $rc)"
printf 'exec syscall x32\n' > "$T/x32.ail"
run_capture out err rc "$WORLDD" check --ailang-bin "$FIX" --source "$T/x32.ail"
is "$rc" 14 "check: an interpreter killed by SIGSYS is an interpreter failure (14), not a refusal"
like "$err" "^worldd check: source check: interpreter killed by SIGSYS: a syscall of a non-native ABI" "check: the non-native ABI kill named"

# nothing left behind: every capsule group made during this test belongs to
# a live process (groups are named world-capsule-PID-N after their maker;
# concurrent tests of other components may hold some)
stale=0
for d in $(comm -13 <(printf '%s\n' "$groups_before") <(groups)); do
  p=$(basename "$d" | cut -d- -f3)
  grep -qx "$p" "$T/pids" || continue # another test's capsule
  # a maker that exits between the listing and this check removed its group first
  kill -0 "$p" 2>/dev/null || [ ! -d "$d" ] || { stale=$((stale + 1)); diag "stale cgroup $d"; }
done
is "$stale" 0 "no cgroup left behind by a finished capsule"
done_testing
