#!/bin/bash
# The exec capsule (issue 40, supervisor/exec.h, docs/exec.md): real
# toolchains from Debian (gcc + make, python3) pass inside it, and project
# code an agent could write (tests/supervisor/exec/attack.c, built by make
# in the capsule) is refused or ended by its limit -- the network, host
# files, another episode's directory, .git/hooks, a process left behind, a
# fork bomb, a memory hog, an output flood, an infinite loop, mount,
# unshare, ptrace -- each with its unconfined control (the same program,
# run by plain fork+exec outside the capsule, gets through). Two runs at
# once each see only their own worktree. As root, then as `nobody` (the
# unprivileged path: user namespaces, no cgroups).
. "$top_srcdir/tests/tap.sh"
command -v gcc >/dev/null && command -v make >/dev/null && command -v python3 >/dev/null ||
  { skip "gcc, make or python3 missing (scripts/install-test-deps.sh)" "exec capsule"; done_testing; exit; }
T=$(mktemp -d /tmp/world-exec.XXXXXX)
LPID=
cleanup() {
  [ -n "$LPID" ] && kill "$LPID" 2>/dev/null
  pkill -f "sleep 98765" 2>/dev/null
  [ -f /root/world-exec-decoy.$$ ] && rm -f /root/world-exec-decoy.$$
  rm -rf "$T"
}
trap cleanup EXIT
chmod 755 "$T"
cp "$top_builddir/tests/supervisor/exec_run" "$T/"
R="$T/exec_run"

# A loopback listener that counts the connections it accepts.
cat > "$T/listen.py" <<'EOF'
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
open(sys.argv[1] + ".port", "w").write(str(s.getsockname()[1]))
n = 0
while True:
    c, _ = s.accept(); n += 1; c.close()
    open(sys.argv[1] + ".tmp", "w").write(str(n)); __import__("os").rename(sys.argv[1] + ".tmp", sys.argv[1])
EOF
echo 0 > "$T/accepts"
python3 "$T/listen.py" "$T/accepts" & LPID=$!
for _ in $(seq 100); do [ -s "$T/accepts.port" ] && break; sleep 0.05; done
PORT=$(cat "$T/accepts.port")

# A decoy on the host, outside anything the capsule is given.
mkdir -p "$T/decoy" && echo "host secret" > "$T/decoy/secret" && chmod -R a+rX "$T/decoy"
if [ "$(id -u)" = 0 ]; then echo "root secret" > /root/world-exec-decoy.$$; fi

# field JSON NAME [LINE]: one field of exec_run's output.
field() { python3 -c 'import json,sys
o=json.loads(sys.argv[1].splitlines()[int(sys.argv[3]) if len(sys.argv) > 3 else 0])
v=o.get(sys.argv[2]); print(json.dumps(v) if isinstance(v, bool) else v)' "$@"; }

# A project: a C program with `make test`, a python unittest, and the attack
# program an agent wrote; .git with a hooks directory (protected).
mkproject() {
  mkdir -p "$1/.git/hooks" "$1/src"
  echo "ref: refs/heads/main" > "$1/.git/HEAD"
  cp "$top_srcdir/tests/supervisor/exec/attack.c" "$1/attack.c"
  cat > "$1/Makefile" <<'EOF'
test: unit
	./unit
unit: src/unit.c
	$(CC) -O1 -Wall -o unit src/unit.c
attack: attack.c
	$(CC) -O1 -o attack attack.c
EOF
  cat > "$1/src/unit.c" <<'EOF'
#include <stdio.h>
static int add(int a, int b) { return a + b; }
int main(void) { if (add(2, 2) != 4) { puts("FAIL"); return 1; } puts("unit: all passed"); return 0; }
EOF
  mkdir -p "$1/gocalc"
  printf 'module example.com/calc\n\ngo 1.19\n' > "$1/gocalc/go.mod"
  printf 'package calc\n\nfunc Add(a, b int) int { return a + b }\n' > "$1/gocalc/calc.go"
  printf 'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal("add")\n\t}\n}\n' > "$1/gocalc/calc_test.go"
  cat > "$1/calc.test.js" <<'EOF'
const test = require('node:test'); const assert = require('assert');
test('spawn', () => { assert.match(require('child_process').execFileSync('sh', ['-c', 'echo hi']).toString(), /hi/); });
test('worker', async () => { await new Promise((res, rej) => { const w = new (require('worker_threads').Worker)('process.exit(0)', { eval: true }); w.on('exit', res); w.on('error', rej); }); });
EOF
  cat > "$1/test_calc.py" <<'EOF'
import unittest
class Calc(unittest.TestCase):
    def test_add(self): self.assertEqual(2 + 2, 4)
    def test_tmp(self):
        import tempfile
        with tempfile.NamedTemporaryFile() as f: f.write(b"x")
    def test_subprocess_and_pool(self):
        import subprocess, multiprocessing
        self.assertEqual(subprocess.check_output(["echo", "hi"]).strip(), b"hi")
        with multiprocessing.Pool(2) as p: self.assertEqual(p.map(abs, [-1, -2]), [1, 2])
    def test_loopback(self):
        import socket
        s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
        c = socket.create_connection(s.getsockname()); a, _ = s.accept(); c.sendall(b"x"); self.assertEqual(a.recv(1), b"x")
if __name__ == "__main__": unittest.main()
EOF
}

pass_as() { # pass_as LABEL [PREFIX...]
  local L=$1; shift
  local AS=("$@") W="$T/$L/ep1/work" W2="$T/$L/ep2/work" C="$T/$L/ep1/cache" U="$T/$L/control"
  mkdir -p "$W" "$W2" "$C" "$U"
  mkproject "$W"; mkproject "$U"
  echo "episode two's secret" > "$W2/secret"; echo ep2 > "$W2/whoami"; echo ep1 > "$W/whoami"
  if [ ${#AS[@]} -gt 0 ]; then chown -R nobody:nogroup "$T/$L"; fi
  local P=(--cache "$C" --protect .git --protect .github --protect .gitmodules)
  ex() { run_capture out err rc "${AS[@]}" "$R" "${P[@]}" "$@"; }
  # the control: the same command, plain fork+exec in a copy of the project
  ctl() { run_capture cout cerr crc "${AS[@]}" sh -c 'cd "$1" && shift && "$@"' sh "$U" "$@"; }

  # -- real toolchains --
  ex "$W" -- make test
  is "$rc $(field "$out" exit_code)" "0 0" "$L: gcc + make: make test passes in the capsule"
  layers=$(field "$out" layers)
  CGMEM=1; CGPIDS=1
  case "$layers" in *"memory none"*) CGMEM=;; esac
  case "$layers" in *"pids none"*) CGPIDS=;; esac
  like "$(field "$out" stdout)" "unit: all passed" "$L: make test's output captured"
  ex "$W" -- python3 -m unittest -v test_calc
  is "$(field "$out" exit_code)" 0 "$L: python3 unittest passes in the capsule"
  like "$(field "$out" stderr)" "Ran 4 tests in" "$L: unittest's stderr captured (subprocess, multiprocessing, a loopback socket)"
  is "$(field "$out" profile) $(field "$out" denied)" "exec " "$L: profile exec, nothing denied"
  like "$(field "$out" digest)" "^sha256:[0-9a-f]{64}$" "$L: the profile's settings digest"
  # A sleep stopped and continued mid-way (job control, a debugger, a
  # freezer) is resumed by the kernel through restart_syscall; seen in CI
  # as go test killed under load. Allowed, or the capsule kills the sleeper.
  ex "$W" -- sh -c 'sleep 1 & p=$!; sleep 0.2; kill -STOP $p; kill -CONT $p; wait $p'
  is "$(field "$out" exit_code) $(field "$out" denied)" "0 " "$L: a sleep stopped and continued resumes (restart_syscall), nothing denied"
  # go and node where the host has them below /usr (CI installs golang-go)
  gobin=$(readlink -f "$(command -v "${GO:-go}" 2>/dev/null)" 2>/dev/null)
  case "$gobin" in
    /usr/*)
      ex --env GOCACHE=/cache/go-build --env GOPATH=/cache/go --env GOFLAGS=-mod=mod --env GOTOOLCHAIN=local \
        --wall-ms 120000 --cwd gocalc "$W" -- "$gobin" test ./...
      is "$(field "$out" exit_code) $(field "$out" denied)" "0 " "$L: go test passes in the capsule"
      like "$(field "$out" stdout)" "ok[[:space:]]+example.com/calc" "$L: go test's output";;
    *) skip "no go below /usr" "$L: go test"; skip "no go below /usr" "$L: go test's output";;
  esac
  nodebin=$(readlink -f "$(command -v node 2>/dev/null)" 2>/dev/null)
  case "$nodebin" in
    /usr/*)
      ex "$W" -- "$nodebin" --test
      is "$(field "$out" exit_code) $(field "$out" denied)" "0 " "$L: node --test passes (child_process, worker_threads)";;
    *) skip "no node below /usr" "$L: node --test";;
  esac
  ex "$W" -- make -s attack
  is "$(field "$out" exit_code)" 0 "$L: the agent's attack program builds in the capsule"
  ctl make -s attack
  is "$crc" 0 "$L: control: it builds outside too"
  a() { ex "$@"; }

  # -- the network: a live loopback listener on the host --
  before=$(cat "$T/accepts")
  ctl ./attack net "$PORT"
  is "$crc $cout" "0 connected" "$L: control: unconfined, the attack connects to the host's listener"
  for _ in $(seq 50); do [ "$(cat "$T/accepts")" != "$before" ] && break; sleep 0.05; done
  mid=$(cat "$T/accepts")
  ok $([ "$mid" -gt "$before" ] && echo 0 || echo 1) "$L: control: the listener counted it ($before -> $mid)"
  a "$W" -- ./attack net "$PORT"
  like "$(field "$out" stdout)" "refused connect: Connection refused" "$L: in the capsule the connect is refused (own namespace, loopback only)"
  sleep 0.2
  is "$(cat "$T/accepts")" "$mid" "$L: the listener's accept count did not move"

  # -- host files, another episode --
  ctl ./attack read "$T/decoy/secret"
  is "$cout" "read 12" "$L: control: the host decoy is readable unconfined"
  a "$W" -- ./attack read "$T/decoy/secret"
  like "$(field "$out" stdout)" "refused open: No such file" "$L: the host decoy does not exist in the capsule"
  if [ "$L" = root ]; then
    ctl ./attack read /root/world-exec-decoy.$$
    is "$cout" "read 12" "$L: control: /root's decoy readable unconfined"
    a "$W" -- ./attack read /root/world-exec-decoy.$$
    like "$(field "$out" stdout)" "refused open: No such file" "$L: /root is not in the capsule"
  fi
  ctl ./attack read "$W2/secret"
  is "$cout" "read 21" "$L: control: episode two's file readable unconfined"
  a "$W" -- ./attack read "$W2/secret"
  like "$(field "$out" stdout)" "refused open: No such file" "$L: episode two's worktree is not in episode one's capsule"
  a "$W" -- ./attack read /etc/shadow
  like "$(field "$out" stdout)" "^read 0" "$L: /etc/shadow reads empty (masked)"
  a "$W" -- ./attack read /etc/passwd
  like "$(field "$out" stdout)" "^read [1-9]" "$L: /etc/passwd is there (toolchains need it)"

  # -- writes: .git/hooks, outside /work --
  ctl ./attack write .git/hooks/post-checkout
  is "$cout" "wrote" "$L: control: .git/hooks/post-checkout writable unconfined"
  a "$W" -- ./attack write .git/hooks/post-checkout
  like "$(field "$out" stdout)" "refused open: Read-only file system" "$L: .git/hooks is read-only in the capsule"
  ok $([ ! -e "$W/.git/hooks/post-checkout" ] && echo 0 || echo 1) "$L: no hook on the host"
  a "$W" -- ./attack write /usr/local/bin/pwn
  like "$(field "$out" stdout)" "refused open: Read-only file system" "$L: /usr is read-only"
  a "$W" -- ./attack write /cache/x
  is "$(field "$out" stdout)" "wrote" "$L: /cache is writable"
  ok $([ -f "$C/x" ] && echo 0 || echo 1) "$L: ... and lands in the episode's cache on the host"
  a "$W" -- ./attack write built.txt
  ok $([ -f "$W/built.txt" ] && echo 0 || echo 1) "$L: a write inside /work lands in the worktree"
  a "$W" -- mkdir .github
  is "$(field "$out" protected_created)" ".github" "$L: a protected name the command created is reported"

  # -- the kernel surface --
  ctl unshare --mount --map-root-user ./attack mount /mnt
  is "$cout" "mounted" "$L: control: mount works unconfined (in a throwaway namespace)"
  a "$W" -- ./attack mount /tmp
  is "$(field "$out" denied) $(field "$out" exit_code)" "mount 137" "$L: mount: denied by the filter, the tree killed"
  ctl ./attack unshare
  is "$cout" "unshared" "$L: control: unshare(CLONE_NEWUSER) works unconfined"
  a "$W" -- ./attack unshare
  is "$(field "$out" denied)" "unshare" "$L: unshare denied"
  ctl ./attack ptrace
  is "$cout" "attached" "$L: control: ptrace of an own child works unconfined"
  a "$W" -- ./attack ptrace
  is "$(field "$out" denied)" "ptrace" "$L: ptrace denied"

  # -- the init (pid 1) is a copy of the caller's memory: not dumpable --
  a "$W" -- ./attack procinit
  like "$(field "$out" stdout)" "^environ:EACCES maps:EACCES status:EACCES" "$L: /proc/1's environ, maps and status pipe (fd 3) are refused"
  is "$(field "$out" exit_code)" 3 "$L: ... and the run's result is the command's own, not forged"
  if [ "$L" != root ]; then # as root the init's setresuid already made it not dumpable
    if [ -n "$HOOKS" ]; then
      run_capture out err rc "${AS[@]}" env WORLD_TEST_CAPSULE_DUMPABLE=1 "$R" "${P[@]}" "$W" -- ./attack procinit
      like "$(field "$out" stdout)" "^environ:read [1-9][0-9]* maps:read [1-9][0-9]* status:wrote" \
        "$L: control: with the init left dumpable (test hook), the command reads its environ and maps and writes its status pipe"
      is "$(field "$out" exit_code)" 0 "$L: control: ... and the forged \"W 0\" is taken for the command's exit"
    else
      skip "built without --enable-test-hooks" "$L: control: a dumpable init is readable"
      skip "built without --enable-test-hooks" "$L: control: ... the forged status"
    fi
  fi

  # -- no setuid/setgid files: as root the files the command makes are root's on the host --
  ctl ./attack setuid
  is "$cout" "chmod:ok open:ok fchmodat:ok" "$L: control: unconfined, chmod 04755, open(O_CREAT, 04755) and fchmodat 02755 succeed"
  ok $([ "$(find "$U" -name 'suid*.bin' -perm /6000 | wc -l)" = 2 ] && echo 0 || echo 1) "$L: control: ... leaving setuid/setgid files"
  a "$W" -- ./attack setuid
  is "$(field "$out" stdout) $(field "$out" denied)" "chmod:EPERM open:EPERM fchmodat:EPERM " "$L: in the capsule each is refused EPERM by the filter (not killed)"
  is "$(find "$W" "$C" -perm /6000 | wc -l)" 0 "$L: no file with a setuid or setgid bit on the host after the run"

  # -- nothing survives --
  ctl ./attack daemon 98765.1
  sleep 0.2
  ok $(pgrep -f "sleep 98765.1" >/dev/null && echo 0 || echo 1) "$L: control: unconfined, the double-forked daemon survives"
  pkill -f "sleep 98765.1"
  a "$W" -- ./attack daemon 98765.2
  is "$(field "$out" exit_code) $(field "$out" stdout)" "0 daemon left" "$L: in the capsule the command returns, its daemon left behind"
  ok $(pgrep -f "sleep 98765.2" >/dev/null && echo 1 || echo 0) "$L: ... and no process of it survives the call"

  # -- limits --
  ctl ./attack forkbomb 200
  is "$cout" "forks 200" "$L: control: 200 forks unconfined"
  a --pids 64 "$W" -- ./attack forkbomb 200
  n=$(field "$out" stdout | sed -n 's/^forks //p')
  ok $([ -n "$n" ] && [ "$n" -lt 96 ] && echo 0 || echo 1) "$L: fork bomb stopped at the pids limit (64, or RLIMIT_NPROC 96 without a group: $n forks)"
  if [ "$L" = root ] && [ -n "$CGPIDS" ]; then is "$(field "$out" limit)" pids "$L: limit pids"
  elif [ "$L" = root ]; then skip "no pids cgroup here ($layers)" "$L: limit pids"; fi
  ctl ./attack memhog 256
  is "$cout" "touched 256" "$L: control: 256 MiB unconfined"
  a --memory $((64 << 20)) "$W" -- ./attack memhog 256
  unlike "$(field "$out" stdout)" "touched" "$L: the memory hog does not get 256 MiB with a 64 MiB limit"
  if [ "$L" = root ] && [ -n "$CGMEM" ]; then is "$(field "$out" limit) $(field "$out" exit_code)" "memory 137" "$L: limit memory (the OOM killer)"
  elif [ "$L" = root ]; then skip "no memory cgroup here ($layers)" "$L: limit memory"; fi
  ctl sh -c './attack flood 8388608 | wc -c'
  is "$cout" 8388608 "$L: control: 8 MiB of output unconfined"
  a --output-max 1048576 "$W" -- ./attack flood 8388608
  is "$(field "$out" limit) $(field "$out" stdout_truncated)" "output true" "$L: output flood: limit output"
  b=$(field "$out" stdout_bytes)
  ok $([ "$b" -gt 1048576 ] && [ "$b" -le $((1048576 + 65536)) ] && echo 0 || echo 1) "$L: ... read no further than the chunk that passed 1 MiB ($b bytes counted)"
  is "$(field "$out" stdout | wc -c)" $((64 * 1024 + 1)) "$L: ... keeps 8 KiB + 56 KiB"
  ctl timeout 1 ./attack spin
  is "$crc" 124 "$L: control: the loop runs until killed unconfined"
  a --wall-ms 800 "$W" -- ./attack spin
  is "$(field "$out" timed_out) $(field "$out" limit) $(field "$out" exit_code)" "true time 137" "$L: infinite loop: the deadline kills the tree"
  a --cpu-ms 500 --wall-ms 10000 "$W" -- ./attack spin
  is "$(field "$out" limit) $(field "$out" timed_out)" "time false" "$L: CPU time of one process ends it"
  # the tree's CPU time: 6 processes of 400 ms each (2.4 s), none past its own 1 s RLIMIT_CPU
  ctl ./attack cpuforks 6 400
  is "$cout" "done" "$L: control: 6 x 400 ms of CPU time unconfined"
  a --cpu-ms 1000 --wall-ms 30000 "$W" -- ./attack cpuforks 6 400
  case "$(field "$out" layers)" in
    *"cpuacct v1 group (tree)"*)
      is "$(field "$out" limit) $(field "$out" timed_out) $(field "$out" stdout)" "time false " \
        "$L: the tree's CPU time (cpuacct group) ends it at 1 s";;
    *) is "$(field "$out" limit) $(field "$out" stdout)" " done" \
        "$L: without a cpuacct group only each process is bounded: the tree's 2.4 s run (residual, docs/exec.md)";;
  esac

  # -- two episodes at once --
  run_capture out err rc "${AS[@]}" "$R" --parallel "$W2" "$W" -- sh -c 'cat whoami; ls /work | tr "\n" " "; ls -d /tmp/world-exec* 2>&1 | head -1'
  like "$(field "$out" stdout 0)" "^ep1" "$L: concurrent run 1 sees its own worktree"
  like "$(field "$out" stdout 1)" "^ep2" "$L: concurrent run 2 sees its own worktree"
  unlike "$(field "$out" stdout 0)" "secret" "$L: run 1 does not see episode two's files"
  like "$(field "$out" stdout 0)" "No such file" "$L: the host's /tmp is not there"

  # -- setup refusals: nothing runs --
  ex "$T/$L/absent" -- true
  like "$(field "$out" message)" "^exec capsule: worktree .*No such file" "$L: a missing worktree: one line"
  ex --cwd ../ep2 "$W" -- true
  like "$(field "$out" message)" "exec capsule: cwd \.\./ep2: must be relative" "$L: a cwd outside the worktree is refused"
  ex --ro / "$W" -- true
  like "$(field "$out" message)" "read root /: is / or /tmp" "$L: / as a read root is refused"
  mkdir -p "$T/$L/sdk/bin" && cp "$T/$L/ep1/work/attack" "$T/$L/sdk/bin/tool" && chmod -R a+rX "$T/$L/sdk"
  run_capture out err rc "${AS[@]}" "$R" --ro "$T/$L/sdk" "$W" -- "$T/$L/sdk/bin/tool" write "$T/$L/sdk/x"
  is "$(field "$out" stdout)" "refused open: Read-only file system" "$L: a read root (here below /tmp) runs, read-only"
  cp "$T/$L/ep1/work/attack" "$T/$L/elsewhere" && chmod a+rx "$T/$L/elsewhere"
  run_capture out err rc "${AS[@]}" "$R" "$W" -- "$T/$L/elsewhere" net 1
  like "$(field "$out" message)" "execveat: Permission denied" "$L: a command outside the system dirs, read roots and /work is not executed (landlock)"
}

HOOKS=
grep -q -- '-DWORLD_TEST_HOOKS=1' "$top_builddir/Makefile" && HOOKS=1

# worldd capsule exec: the same capsule from the command line (the audit's way in)
mkdir -p "$T/verb"
run_capture out err rc "$WORLDD" capsule exec --worktree "$T/verb" --env PATH=/usr/bin -- /usr/bin/sh -c 'echo hi > f; cat f; cat /etc/shadow | wc -c'
is "$rc $(field "$out" exit_code) $(field "$out" stdout | xargs)" "0 0 hi 0" "worldd capsule exec: runs, writes /work, /etc/shadow masked"
run_capture out err rc "$WORLDD" capsule exec --worktree "$T/verb" -- sh
is "$rc" 2 "worldd capsule exec: a relative PROGRAM is a usage error"

if [ "$(id -u)" = 0 ]; then
  pass_as root
  if command -v setpriv >/dev/null; then
    pass_as nobody setpriv --reuid=nobody --regid=nogroup --clear-groups
  else
    skip "setpriv missing" "unprivileged exec capsule"
  fi
else
  pass_as user
fi
done_testing
