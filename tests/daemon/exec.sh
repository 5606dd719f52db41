#!/bin/bash
# workspace-exec end to end (issue 40, docs/exec.md): worldd serve with an
# exec profile, se-tools published (packages-fixture), MCP tools/call of
# workspace-exec.
#   - start-up: a profile refused at load is one line naming the file and
#     the field, exit 3, nothing written; no --exec-profile: the call is
#     the refusal naming the flag;
#   - with the exec capsule linked (supervisor/exec.c) and its probe passed:
#     a C project's `make test` and a Python unittest pass; a command id
#     not in the profile and a bad arg are refused naming them, running
#     nothing; project code reading a sibling episode's file and the
#     store's folder gets nothing (the same Makefile run unconfined reads
#     both: the control); two episodes' exec calls at once each see only
#     their own worktree; an exec and an edit of one episode take turns
#     (the edit is seen waiting at effect.waiting_turn while the exec
#     runs); `worldd why` shows the record; `worldd replay` answers from
#     the record and never runs the command again (its append-only log is
#     unchanged).
#     --exec-max-output-bytes kills a flood (limit output); a binary swapped
#     after start-up is a failed effect; a protected name the command
#     creates is removed; the seeded cache; the grant and the budget; two
#     profiles with --exec-episode-project, and timeout_ms ending a run
#     (sleep 12 under timeout_ms 1000: timed out), while the same sleep 12
#     under a profile's timeout_ms 20000 -- past the 10 s a tool run gets
#     and within --exec-max-ms -- runs to exit 0 (the one long test); a
#     profile's timeout_ms above --exec-max-ms is refused at load; a
#     notifications/cancelled ends a running exec call, its tree killed;
#   - without the capsule: the probe's start-up line names the arm, and an
#     exec call is refused naming it (never run);
#   - the daemon's own secrets: its log key file (--log-key) under the
#     profile's read root or in the workspace root is the arm "secrets" --
#     not offered, the start-up line and the call's refusal name the file
#     and the tree, nothing runs; the same file outside every shown tree:
#     offered (the control).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
command -v curl >/dev/null || { skip "curl not installed" "exec"; done_testing; exit; }
PFIX="$top_builddir/tests/packages/packages-fixture"
[ -x "$PFIX" ] || { skip "no tests/packages/packages-fixture" "exec"; done_testing; exit; }
for t in make gcc python3 bash; do
  command -v $t >/dev/null || { skip "$t not installed" "exec"; done_testing; exit; }
done
T=$(mktemp -d "${TMPDIR:-/tmp}/world-exec.XXXXXX")   # the store's folder: world.db, ws/
E=$(mktemp -d "${TMPDIR:-/tmp}/world-exec-etc.XXXXXX") # the profiles: outside the store's folder
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; rm -rf "$T" "$E"' EXIT
DB=$T/world.db
WS=$T/ws
mkdir -p "$WS/ep1" "$WS/ep2"
GRANTS=(Workspace.Read=worktree:1000 Workspace.Write=worktree:1000 Workspace.Exec=worktree:1000)
C1=$("$PFIX" "$T" "$top_srcdir" ep1 "$top_srcdir/packages/se-tools/transitions.json" "${GRANTS[@]}") || bail "packages fixture ep1"
C2=$("$PFIX" "$T" "$top_srcdir" ep2 "$top_srcdir/packages/se-tools/transitions.json" "${GRANTS[@]}") || bail "packages fixture ep2"
C3=$("$PFIX" "$T" "$top_srcdir" ep3 "$top_srcdir/packages/se-tools/transitions.json" Workspace.Exec=worktree:1) || bail "packages fixture ep3"
C4=$("$PFIX" "$T" "$top_srcdir" ep4 "$top_srcdir/packages/se-tools/transitions.json" Workspace.Read=worktree:10) || bail "packages fixture ep4"
C5=$("$PFIX" "$T" "$top_srcdir" ep5 "$top_srcdir/packages/se-tools/transitions.json" "${GRANTS[@]}") || bail "packages fixture ep5"
C6=$("$PFIX" "$T" "$top_srcdir" ep6 "$top_srcdir/packages/se-tools/transitions.json" "${GRANTS[@]}") || bail "packages fixture ep6"

cat > "$E/demo.json" <<'EOF'
{"profile":"world/exec-profile/v1","project":"demo","root":".","path":["/usr/bin","/bin"],
 "env":{"DEMO":"1"},"timeout_ms":9000,"probe":["make","--version"],
 "commands":{
  "test":{"argv":["make","-s","test"],"max_args":0},
  "unittest":{"argv":["python3","-m","unittest"],"flags":{"-v":"bool"},"positional":"testfile","max_args":3},
  "look":{"argv":["make","-s","look"],"max_args":0},
  "wait":{"argv":["make","-s","wait"],"max_args":0},
  "meet":{"argv":["make","-s","meet"],"max_args":0},
  "append":{"argv":["sh","-c","echo ran >> ran.log; wc -l < ran.log"],"max_args":0},
  "plant":{"argv":["sh","-c","mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit && echo planted"],"max_args":0},
  "flood":{"argv":["head","-c","1000000","/dev/zero"],"max_args":0},
  "mine":{"argv":["MINEBIN","mine"],"max_args":0},
  "cache":{"argv":["sh","-c","cat \"$CCACHE_DIR/seeded\"; echo h > \"$HOME/h\" && cat \"$HOME/h\"; echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"; echo c >> \"$CCACHE_DIR/seeded\"; echo \"$HOME $TMPDIR $CCACHE_DIR $DEMO\""],"max_args":0}},
 "caches":{"CCACHE_DIR":{"seed":"SEEDDIR"}}}
EOF
mkdir -p "$E/seed"; echo SEEDED > "$E/seed/seeded"
sed -i "s|SEEDDIR|$E/seed|" "$E/demo.json"
chmod 755 "$E"; mkdir -p "$E/bin"; cp /usr/bin/printf "$E/bin/mine"   # an operator's own binary, swapped later
sed -i "s|MINEBIN|$E/bin/mine|; s|\"caches\":|\"read_roots\":[\"$E/bin\"],\"caches\":|" "$E/demo.json"
echo '{"profile":"world/exec-profile/v1","project":"demo","path":["/usr/bin"],"env":{"HTTPS_PROXY":"http://x"},"commands":{"t":{"argv":["make"]}}}' > "$E/bad.json"
echo '{"profile":"world/exec-profile/v1","project":"slow","path":["/usr/bin"],"timeout_ms":1000,"commands":{"sleep":{"argv":["sleep","12"],"max_args":0}}}' > "$E/slow.json"
echo '{"profile":"world/exec-profile/v1","project":"long","path":["/usr/bin"],"timeout_ms":20000,"commands":{"sleep":{"argv":["sleep","12"],"max_args":0}}}' > "$E/long.json"

start() { # OUT ERR flags...: serve on port 0; sets URL, DPID
  local o=$1 e=$2; shift 2
  "$WORLDD" serve --store "$DB" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 --workspace-root "$WS" \
    --tool-ailang-bin "$AILANG_LITE" "$@" >"$o" 2>"$e" &
  DPID=$!; PIDS+=("$DPID"); URL=""
  for _ in $(seq 1 300); do
    URL=$(sed -n 's/^worldd listening on //p' "$o"); [ -n "$URL" ] && return 0
    kill -0 "$DPID" 2>/dev/null || break; sleep 0.1
  done
  diag "daemon did not start: $(cat "$e")"; return 1
}
stop() { kill -TERM "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null; }
xcall() { # CRED ARGS-JSON TASK: tools/call workspace-exec; sets J (the JSON-RPC answer)
  J=$(curl -sS -m 120 -X POST "$URL/mcp/" -H "$(auth "$1")" "${MCP_HDRS[@]}" --data-binary \
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"workspace-exec\",\"arguments\":$2,\"_meta\":{\"world/task_id\":\"$3\"}}}" 2>/dev/null)
  J=$(printf '%s' "$J" | sed -n 's/^data: //p;/^{/p' | head -1)
}
sc() { jget "result.structuredContent.$1" <<<"$J"; }

# ---- load-time refusal: one line, exit 3, nothing written ----
before=$(stat -c %Y:%s "$DB")
run_capture out err rc "$WORLDD" serve --store "$DB" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 \
  --workspace-root "$WS" --exec-profile "$E/bad.json"
is "$rc" 3 "a profile naming HTTPS_PROXY in env: serve exits 3"
is "$(printf '%s\n' "$err" | grep -c .)" 1 "... with one line"
like "$err" "exec profile $E/bad.json: /env/HTTPS_PROXY: " "... naming the file and the field"
is "$(stat -c %Y:%s "$DB")" "$before" "... and the store is untouched"
run_capture out err rc "$WORLDD" serve --store "$DB" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 \
  --workspace-root "$WS" --exec-profile "$E/demo.json" --exec-max-ms 5000
is "$rc:$(printf '%s\n' "$err" | grep -c .)" "3:1" "a profile's timeout_ms 9000 above --exec-max-ms 5000: serve exits 3 with one line"
like "$err" "exec profile $E/demo.json: /timeout_ms: 9000 ms is above this daemon's cap on one exec run, 5000 ms" \
  "... naming the file and /timeout_ms (refused, not clamped)"
cp "$E/demo.json" "$T/inside.json"
run_capture out err rc "$WORLDD" serve --store "$DB" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 \
  --workspace-root "$WS" --exec-profile "$T/inside.json"
is "$rc:$(printf '%s\n' "$err" | grep -c 'inside the store')" "3:1" "a profile file inside the store's folder is refused"

# ---- no profile: the refusal names the flag ----
start "$T/out0" "$T/err0" || bail "daemon without a profile"
xcall "$C1" '{"command":"test"}' np-1
like "$(sc refused)" "no exec profile: start worldd serve with --exec-profile FILE" \
  "no --exec-profile: a workspace-exec call is refused naming the flag"
stop

# ---- the project files (the agent's, written on the host for brevity) ----
SIB=$WS/ep2/secret.txt
echo "EP2-SECRET" > "$SIB"
echo "STORE-SECRET" > "$T/store-secret.txt"
cat > "$WS/ep1/Makefile" <<EOF
test: calc
	./calc 2 3 | grep -qx 5 && echo "C-TESTS-PASSED"
calc: calc.c
	gcc -O0 -o calc calc.c
look:
	@cat $SIB 2>/dev/null || echo SIBLING-UNREADABLE
	@cat $T/store-secret.txt 2>/dev/null || echo STORE-UNREADABLE
	@ls -1A /work | sort | tr '\n' ' '; echo
wait:
	@touch started; while [ ! -e go ]; do sleep 0.05; done; echo WAITED
meet:
	@touch met; while [ ! -e go-meet ]; do sleep 0.05; done; ls -1A /work | sort | tr '\n' ' '; echo
EOF
cat > "$WS/ep1/calc.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
int main(int c, char **v) { if (c != 3) return 2; printf("%d\n", atoi(v[1]) + atoi(v[2])); return 0; }
EOF
mkdir -p "$WS/ep1/tests"
cat > "$WS/ep1/tests/test_calc.py" <<'EOF'
import unittest
class T(unittest.TestCase):
    def test_add(self):
        self.assertEqual(1 + 1, 2)
if __name__ == "__main__":
    unittest.main()
EOF
cp "$WS/ep1/Makefile" "$WS/ep2/Makefile"
echo "EP1-MARK" > "$WS/ep1/mark-ep1"; echo "EP2-MARK" > "$WS/ep2/mark-ep2"
# the control: the same project code run unconfined reads the sibling and the store's folder
(cd "$WS/ep1" && make -s look > "$T/look-control")
is "$(head -2 "$T/look-control" | tr '\n' ' ')" "EP2-SECRET STORE-SECRET " \
  "control: ep1's Makefile run unconfined reads ep2's file and the store's folder"

start "$T/out1" "$T/err1" --exec-profile "$E/demo.json" || bail "daemon with the profile"
line=$(grep 'exec profile' "$T/err1")
if ! printf '%s' "$line" | grep -q ': offered;'; then
  like "$line" "not offered: arm " "the probe's start-up line names the failed arm"
  xcall "$C1" '{"command":"test"}' na-1
  like "$(sc refused)" "the start-up probe failed: arm " "... and an exec call is refused naming it"
  ok "$([ ! -e "$WS/ep1/calc" ]; echo $?)" "... nothing ran (no calc built)"
  stop
  skip "the exec profile is not offered on this host ($line)" "exec end to end"
  done_testing; exit
fi
ok 0 "the probe passed: $line"

# ---- a C project's make test, a Python unittest ----
xcall "$C1" '{"command":"test"}' c-1
is "$(sc ok):$(sc exit_code):$(sc stdout)" "true:0:C-TESTS-PASSED" "make test of a C project passes through workspace-exec"
is "$(sc argv.0):$(sc argv.1):$(sc argv.2)" "/usr/bin/make:-s:test" "... argv as run"
is "$(sc profile.project):$(sc sandbox.network)" "demo:none" "... profile and sandbox recorded"
ok "$([ -x "$WS/ep1/calc" ]; echo $?)" "... the binary it built is in the worktree"
xcall "$C1" '{"command":"unittest","args":["-v","tests/test_calc.py"]}' py-1
is "$(sc exit_code)" 0 "python3 -m unittest -v tests/test_calc.py passes"
like "$(sc stderr)" "test_add .* ok" "... its verbose report"
ok "$([ -z "$(find "$WS/ep1" -name __pycache__)" ]; echo $?)" "... and left no __pycache__ in the worktree (PYTHONPYCACHEPREFIX)"

# ---- the exec cache: HOME, TMPDIR and a seeded cache, writable, per episode, outside the worktree ----
xcall "$C1" '{"command":"cache"}' k-1
is "$(sc stdout | tr '\n' ' ')" "SEEDED h t /cache/home /cache/tmp /cache/var-CCACHE_DIR 1  " \
  "inside: the seed copied in, HOME and TMPDIR writable, World's variables and the profile's"
is "$(tr '\n' ' ' < "$WS/.world-exec/ep1/demo/var-CCACHE_DIR/seeded")" "SEEDED c " "the episode's cache on the host holds the write"
is "$(cat "$E/seed/seeded")" "SEEDED" "... and the seed is unchanged"
is "$(stat -c %a "$WS/.world-exec/ep1/demo")" 700 "... the cache is 0700, beside the worktrees"

# ---- a protected name the command creates where there was none is removed ----
xcall "$C1" '{"command":"plant"}' g-1
is "$(sc stdout):$(sc protected_removed.0)" "planted:.git" "project code creating .git/hooks: it ran, and .git is reported removed"
ok "$([ ! -e "$WS/ep1/.git" ]; echo $?)" "... no .git is left in the worktree for the operator's git to run"

# ---- refusals before anything runs ----
xcall "$C1" '{"command":"deploy"}' r-1
like "$(sc refused)" "command deploy is not in project demo's profile" "a command id not in the profile is refused naming it"
xcall "$C1" '{"command":"unittest","args":["-v","--pdb"]}' r-2
like "$(sc refused)" 'args\[1\] "--pdb": flag --pdb is not one of' "a flag outside the grammar is refused naming the arg"
xcall "$C1" '{"command":"unittest","args":["../ep2/test_x.py"]}' r-3
like "$(sc refused)" 'args\[0\] "../ep2/test_x.py"' "a path out of the worktree is refused naming the arg"

# ---- confinement: the sibling and the store's folder ----
xcall "$C1" '{"command":"look"}' l-1
is "$(printf '%s\n' "$(sc stdout)" | head -2 | tr '\n' ' ')" "SIBLING-UNREADABLE STORE-UNREADABLE " \
  "the same Makefile through workspace-exec reads neither ep2's file nor the store's folder"

# ---- two episodes at once: each sees only its own worktree ----
# both held running at once (each made 'met' in its own worktree), then released
( xcall "$C1" '{"command":"meet"}' two-1; sc stdout > "$T/two1" ) & a=$!
( xcall "$C2" '{"command":"meet"}' two-2; sc stdout > "$T/two2" ) & b=$!
for _ in $(seq 1 1200); do [ -e "$WS/ep1/met" ] && [ -e "$WS/ep2/met" ] && break; sleep 0.05; done
ok "$([ -e "$WS/ep1/met" ] && [ -e "$WS/ep2/met" ]; echo $?)" "two episodes' exec calls run at the same time"
touch "$WS/ep1/go-meet" "$WS/ep2/go-meet"
wait $a; wait $b
like "$(cat "$T/two1")" "mark-ep1" "ep1's exec sees its own worktree"
unlike "$(cat "$T/two1")" "mark-ep2" "... and not ep2's"
like "$(cat "$T/two2")" "mark-ep2" "ep2's exec, at the same time, sees its own"
unlike "$(cat "$T/two2")" "mark-ep1" "... and not ep1's"
stop

# ---- --exec-max-output-bytes: a flood is killed, limit "output"; a swapped binary never runs ----
start "$T/out5" "$T/err5" --exec-profile "$E/demo.json" --exec-max-output-bytes 65536 || bail "daemon 5"
xcall "$C1" '{"command":"flood"}' f-1
is "$(sc ok):$(sc limit)" "true:output" "a command printing 1 MB past --exec-max-output-bytes 65536: killed, limit output"
xcall "$C1" '{"command":"mine"}' m-1
is "$(sc exit_code):$(sc stdout)" "0:mine" "control: the operator's own binary (in a read root) runs"
cp /usr/bin/echo "$E/bin/mine"
xcall "$C1" '{"command":"mine"}' m-2
is "$(sc world.effects.0.status)" "failed" "the binary swapped after start-up: the effect failed"
like "$J" "sha256 [0-9a-f]{64}, the profile recorded [0-9a-f]{64} at load: not run" "... a failed effect naming both digests"
stop

# ---- an exec and an edit of one episode take turns ----
PD=$T/pause; mkdir -p "$PD"
echo "line old" > "$WS/ep1/f.txt"
rm -f "$WS/ep1/started" "$WS/ep1/go"
WORLD_TEST_PAUSE=effect.waiting_turn@1 WORLD_TEST_PAUSE_DIR="$PD" start "$T/out3" "$T/err3" --exec-profile "$E/demo.json" || bail "daemon 3"
( xcall "$C1" '{"command":"wait"}' t-1; sc stdout > "$T/w1" ) & w=$!
for _ in $(seq 1 1200); do [ -e "$WS/ep1/started" ] && break; sleep 0.05; done
ok "$([ -e "$WS/ep1/started" ]; echo $?)" "the exec call is running (it made 'started' in the worktree)"
( curl -sS -m 120 -X POST "$URL/mcp/" -H "$(auth "$C1")" "${MCP_HDRS[@]}" --data-binary \
  '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ailang-edit","arguments":{"path":"f.txt","old_text":"old","new_text":"new"},"_meta":{"world/task_id":"t-2"}}}' >"$T/e1" ) & e=$!
for _ in $(seq 1 1200); do [ -e "$PD/effect.waiting_turn.1.reached" ] && break; sleep 0.05; done
ok "$([ -e "$PD/effect.waiting_turn.1.reached" ]; echo $?)" "an edit of the same episode waits for the episode's turn"
is "$(cat "$WS/ep1/f.txt")" "line old" "... and has not touched the file"
touch "$WS/ep1/go"
wait $w
is "$(cat "$T/w1")" "WAITED" "the exec finishes"
touch "$PD/effect.waiting_turn.1.go"
wait $e
is "$(cat "$WS/ep1/f.txt")" "line new" "then the edit runs"
stop

# ---- the broker's gate: a grant, a budget ----
start "$T/out6" "$T/err6" --exec-profile "$E/demo.json" || bail "daemon 6"
xcall "$C3" '{"command":"append"}' b-1
is "$(sc stdout)" "1" "a session granted Workspace.Exec=worktree:1: its first exec call runs"
xcall "$C3" '{"command":"append"}' b-2
is "$(sc world.effects.0.status)" "denied" "... its second is denied (budget spent)"
is "$(wc -l < "$WS/ep3/ran.log")" 1 "... and did not run"
xcall "$C4" '{"command":"append"}' b-3
unlike "$J" '"structuredContent":\{"exit_code"' "a session without a Workspace.Exec grant gets no run"
ok "$([ ! -e "$WS/ep4/ran.log" ]; echo $?)" "... nothing ran in its worktree"
# ---- a cancel ends an exec run at once (the run above waited for 'go': the control) ----
rm -f "$WS/ep1/started" "$WS/ep1/go"
( xcall "$C1" '{"command":"wait"}' cx-1; printf '%s' "$J" > "$T/cx" ) & w=$!
for _ in $(seq 1 1200); do [ -e "$WS/ep1/started" ] && break; sleep 0.05; done
ok "$([ -e "$WS/ep1/started" ]; echo $?)" "an exec call waiting for 'go' is running"
code=$(curl -sS -m 30 -o /dev/null -w '%{http_code}' -X POST "$URL/mcp/" -H "$(auth "$C1")" "${MCP_HDRS[@]}" \
  --data-binary '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"test"}}')
is "$code" 202 "notifications/cancelled for it: 202"
wait $w
unlike "$(cat "$T/cx")" "WAITED" "... the call ended without its command finishing (never given 'go')"
ok "$(! pgrep -f 'while \[ ! -e go \]' >/dev/null; echo $?)" "... and no process of the run is left"
stop
run_capture out err rc "$WORLDD" why mcp:ep1:cx-1 --store "$DB"
like "$out$err" "cancelled" "worldd why: the exec call is recorded cancelled"

# ---- two profiles: an episode maps to its project; timeout_ms ends a run ----
start "$T/out7" "$T/err7" --exec-profile "$E/demo.json" --exec-profile "$E/slow.json" --exec-profile "$E/long.json" \
  --exec-episode-project ep5=slow --exec-episode-project ep1=demo --exec-episode-project ep6=long || bail "daemon 7"
is "$(grep -c 'exec profile .*: offered;' "$T/err7")" 3 "three profiles loaded and probed"
xcall "$C5" '{"command":"sleep"}' s-1
is "$(sc ok):$(sc timed_out):$(sc limit):$(sc profile.project)" "true:true:time:slow" \
  "ep5 runs its project's command; timeout_ms 1000 ends sleep 12 (timed_out, limit time)"
xcall "$C6" '{"command":"sleep"}' s-4
is "$(sc ok):$(sc exit_code):$(sc timed_out):$(sc limit):$(sc profile.project)" "true:0:false:null:long" \
  "the same sleep 12 under timeout_ms 20000 runs to exit 0, not timed out (past the 10 s of a tool run)"
ok "$([ "$(sc duration_ms)" -ge 12000 ]; echo $?)" "... it ran its 12 s ($(sc duration_ms) ms)"
xcall "$C1" '{"command":"sleep"}' s-2
like "$(sc refused)" "command sleep is not in project demo's profile" "ep1 is mapped to demo: slow's command is not its"
xcall "$C2" '{"command":"test"}' s-3
like "$(sc refused)" "--exec-episode-project ep2=PROJECT" "an unmapped episode with two profiles loaded is refused naming the flag"
stop

# ---- why and replay: the record answers, the command never runs again ----
start "$T/out4" "$T/err4" --exec-profile "$E/demo.json" || bail "daemon 4"
xcall "$C1" '{"command":"append"}' a-1
is "$(sc stdout)" "1" "an exec call appends one line to ran.log"
stop
run_capture out err rc "$WORLDD" why head --store "$DB" --json
is "$rc" 0 "worldd why head: exit 0 ($err)"
like "$out" "Workspace.Exec" "... the record names Workspace.Exec"
run_capture out err rc "$WORLDD" replay --all --store "$DB"
is "$rc" 0 "worldd replay --all: exit 0 ($err)"
like "$(printf '%s\n' "$out" | tail -1)" "diverged 0$" "... nothing diverges"
is "$(wc -l < "$WS/ep1/ran.log")" 1 "... and ran.log still has one line: replay never ran the command"
run_capture out err rc "$WORLDD" scan --store "$DB"
is "$rc:$out" "0:" "the store scans clean"

# ---- the daemon's own secrets: none under a tree the capsule shows ----
# A SQLite store takes no password file: its log signing key file (made
# here through a terminal, pty.py, as tests/daemon/logtree.sh does), given
# by --log-key at a place the capsule shows.
PTY="$top_srcdir/tests/publish/pty.py"
mkdir -p "$E/keys"; chmod 700 "$E/keys"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '[y/N] ' --answer y --out "$T/ko" --err "$T/ke" --tty "$T/kt" -- \
  "$WORLDD" log key init --store "$DB" --log-key "$E/keys/world.log-key"
if [ -f "$E/keys/world.log-key" ]; then
  cp -p "$E/keys/world.log-key" "$E/bin/world.log-key"
  start "$T/outk" "$T/errk" --exec-profile "$E/demo.json" --log-key "$E/bin/world.log-key" || bail "daemon with its key in a read root"
  like "$(grep 'exec profile' "$T/errk")" "not offered: arm secrets: the log signing key file $E/bin/world.log-key is visible inside the exec capsule under the read root .*/bin:" \
    "a log key file under the profile's read root: exec not offered, the start-up line names the file and the tree"
  xcall "$C1" '{"command":"append"}' sk-1
  like "$(sc refused)" "the start-up probe failed: arm secrets: the log signing key file $E/bin/world.log-key " \
    "... and an exec call is refused naming it"
  is "$(wc -l < "$WS/ep1/ran.log")" 1 "... nothing ran"
  stop
  rm -f "$E/bin/world.log-key"
  cp -p "$E/keys/world.log-key" "$WS/world.log-key"
  start "$T/outk" "$T/errk" --exec-profile "$E/demo.json" --log-key "$WS/world.log-key" || bail "daemon with its key in the workspace root"
  like "$(grep 'exec profile' "$T/errk")" "not offered: arm secrets: the log signing key file $WS/world.log-key is visible inside the exec capsule under the workspace root" \
    "a log key file in the workspace root: exec not offered, naming the file and the tree"
  stop
  rm -f "$WS/world.log-key"
  start "$T/outk" "$T/errk" --exec-profile "$E/demo.json" --log-key "$E/keys/world.log-key" || bail "daemon with its key outside"
  like "$(grep 'exec profile' "$T/errk")" ": offered; probe: every arm passed" \
    "control: the same key file outside every shown tree: exec offered"
  stop
else
  skip "log key init through a terminal failed ($(cat "$T/ke" 2>/dev/null | tail -1))" "the daemon's secrets under a shown tree"
fi
unlike "$(cat "$T"/err*)" "runtime error|Sanitizer" "no sanitizer report from any daemon"
done_testing
