#!/bin/bash
# Effectful calls of one episode across daemons (issue 20 item 3): two
# `worldd serve` on one store share one --workspace-root; parallel
# ailang-edit calls of distinct lines of one file, half to each daemon,
# all acknowledged and every edit in the file (the episode's turn is an
# flock on <workspace-root>/.world-turns/<episode>.lock, broker/turn.c).
# The control that the lock is what serialises them: an edit held by the
# pause point workspace.edit.read (it has read the file, not yet replaced
# it) holds that flock in /proc/locks, and an edit of the same episode sent
# to the other daemon is seen blocked on the same lock (a "->" waiter of
# that inode) until the first goes on -- without the lock it would read
# the file the first is about to replace and one of the two edits would
# be lost.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
command -v curl >/dev/null || { skip "curl not installed" "daemon tests"; done_testing; exit; }
PFIX="$top_builddir/tests/packages/packages-fixture"
[ -x "$PFIX" ] || { skip "no tests/packages/packages-fixture" "turns"; done_testing; exit; }
T=$(mktemp -d "${TMPDIR:-/tmp}/world-turns.XXXXXX")
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; rm -rf "$T"' EXIT
mkdir -p "$T/ws/ep1"
PCRED=$("$PFIX" "$T" "$top_srcdir" ep1 "$top_srcdir/packages/se-tools/transitions.json" \
  Workspace.Read=worktree:1000 Workspace.Write=worktree:1000) || bail "packages fixture"
DB=$T/world.db
declare -a U P
start_d() {
  local n=$1; shift
  env "$@" "$WORLDD" serve --store "$DB" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 \
    --workspace-root "$T/ws" --tool-ailang-bin "$AILANG_LITE" >"$T/out$n" 2>"$T/err$n" &
  P[$n]=$!; PIDS+=("${P[$n]}")
  for _ in $(seq 1 300); do
    U[$n]=$(sed -n 's/^worldd listening on //p' "$T/out$n")
    [ -n "${U[$n]}" ] && return 0
    kill -0 "${P[$n]}" 2>/dev/null || break
    sleep 0.1
  done
  diag "daemon $n did not start: $(cat "$T/err$n")"; return 1
}
stop_d() { kill -TERM "${P[$1]}" 2>/dev/null; wait "${P[$1]}" 2>/dev/null; }
edit() { # N LINE TASK: ailang-edit of "LINE old" -> "LINE new" in f.txt through daemon N; prints ok
  curl -sS -m 120 -X POST "${U[$1]}/mcp/" -H "$(auth "$PCRED")" "${MCP_HDRS[@]}" --data-binary \
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"ailang-edit\",\"arguments\":{\"path\":\"f.txt\",\"old_text\":\"$2 old\",\"new_text\":\"$2 new\"},\"_meta\":{\"world/task_id\":\"$3\"}}}" 2>/dev/null |
    grep -q "\"isError\":false" && echo ok
}
F="$T/ws/ep1/f.txt"
for i in $(seq -w 1 12); do echo "L$i old"; done > "$F"

start_d 1 || bail "daemon 1"
start_d 2 || bail "daemon 2"
L="$T/acks"; mkdir -p "$L"
EP=()
for i in $(seq -w 1 12); do
  d=$(( 10#$i % 2 + 1 ))
  ( [ "$(edit "$d" "L$i" "e-$i")" = ok ] && echo "L$i" > "$L/$i" ) & EP+=($!)
done
for p in "${EP[@]}"; do wait "$p"; done
is "$(ls "$L" | wc -l)" 12 "12 parallel ailang-edit calls of one episode, 6 to each of two daemons: all acknowledged"
is "$(grep -c ' new$' "$F")/$(grep -c ' old$' "$F")" "12/0" "every acknowledged edit is in the file (none lost to the other daemon's edit)"
lf="$T/ws/.world-turns/ep1.lock"
is "$(stat -c %a "$lf" 2>/dev/null)" 600 "the episode's turn lock file is <workspace-root>/.world-turns/ep1.lock (0600)"
stop_d 1; stop_d 2

# ---- the control: the turn is held across daemons while an edit is paused ----
PD="$T/pause"; mkdir -p "$PD"
printf "M01 old\nM02 old\n" >> "$F"
start_d 3 WORLD_TEST_PAUSE=workspace.edit.read@1 WORLD_TEST_PAUSE_DIR="$PD" || bail "daemon 3"
start_d 4 || bail "daemon 4"
( edit 3 M01 m-1 > "$T/m1" ) & e1=$!
for _ in $(seq 1 1200); do [ -e "$PD/workspace.edit.read.1.reached" ] && break; sleep 0.05; done
ok "$([ -e "$PD/workspace.edit.read.1.reached" ]; echo $?)" "daemon 3's edit is held after reading the file, before replacing it"
ino=$(stat -c %i "$lf")
held() { awk -v ino=":$ino" -v pid="$1" '$2 != "->" && $2 == "FLOCK" && $5 == pid && substr($6, length($6) - length(ino) + 1) == ino' /proc/locks | grep -c .; }
waiting() { awk -v ino=":$ino" -v pid="$1" '$2 == "->" && $3 == "FLOCK" && $6 == pid && substr($7, length($7) - length(ino) + 1) == ino' /proc/locks | grep -c .; }
is "$(held "${P[3]}")" 1 "... and daemon 3 holds the flock of ep1.lock (/proc/locks)"
( edit 4 M02 m-2 > "$T/m2" ) & e2=$!
for _ in $(seq 1 1200); do [ "$(waiting "${P[4]}")" -ge 1 ] && break; kill -0 "$e2" 2>/dev/null || break; sleep 0.05; done
is "$(waiting "${P[4]}")" 1 "an edit of the same episode sent to daemon 4 waits for that flock"
ok "$(kill -0 "$e2" 2>/dev/null; echo $?)" "... its call is unanswered meanwhile"
touch "$PD/workspace.edit.read.1.go"
wait "$e1"; wait "$e2"
is "$(cat "$T/m1")/$(cat "$T/m2")" "ok/ok" "released: both edits are acknowledged"
is "$(grep -c '^M0[12] new$' "$F")" 2 "... and both are in the file"
stop_d 3; stop_d 4
run_capture out err rc "$WORLDD" scan --store "$DB"
is "$rc:$out" "0:" "the store scans clean"
done_testing
