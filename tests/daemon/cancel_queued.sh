#!/bin/bash
# Cancelling a call that still waits for a call worker (issue 22 item 4;
# docs/daemon.md, "Cancellation and progress": pending cancels).
# One call worker (--capacity 1), held at the test-only pause point
# daemon.worker by another episode's call; the calls below are queued
# behind it (daemon.queued says when each is in the queue), then the
# worker is let go and runs them in turn, so the order is the same every
# run (no sleeps, no timing thresholds).
#  MCP: A's tools/call id 7 is queued; A cancels it (notifications/cancelled,
#   202 on the HTTP thread): it never runs -- no answer, no capsule (the
#   supervisor's "nothing ran"), no log entry, journal cancelled. Controls:
#   A's queued id 8, which another episode's session and another session
#   of A's own episode both "cancel", commits (a cancel reaches only its
#   own credential's calls); A's cancel of id 9 sent before its request
#   id 9 does not reach that later request (it commits).
#  A2A: A's SendMessage of task qa1 is queued; A's CancelTask of it
#   answers the task canceled, the SendMessage answers canceled, GetTask
#   says canceled, journal cancelled, no entry. Controls: A's queued task
#   qa2, which another episode cancels (not found there), completes.
#  Then: no capsule left, worldd scan --objects clean.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
command -v curl >/dev/null || { skip "curl not installed" "queued cancel tests"; done_testing; exit; }
if ! grep -q -- '-DWORLD_TEST_HOOKS=1' "$top_builddir/Makefile"; then
  skip "built without --enable-test-hooks (no pause points)" "queued cancel tests"
  done_testing; exit
fi
kids() { local p; for p in $(ps -o pid= --ppid "$1" 2>/dev/null); do echo "$p"; kids "$p"; done; }
capsules() { # the daemon's descendants but its spawner
  local p n=0
  for p in $(kids "$1"); do [ "$(cat "/proc/$p/comm" 2>/dev/null)" = world-spawner ] || n=$((n + 1)); done
  echo "$n"
}
q() { "$SQLITE3_SHELL" "$DB" "$1"; }
outcome() { q "SELECT o.status FROM journal i JOIN journal o ON o.intent_id = i.id WHERE i.phase = 'intent' AND i.subject = '$1' ORDER BY o.id"; }
entries() { q "SELECT count(*) FROM log_entries"; }
await() { # FILE: wait until it exists, at most 60 s
  local i
  for i in $(seq 1 1200); do [ -e "$1" ] && return 0; sleep 0.05; done
  diag "waited 60 s for $1"
  return 1
}
queued() { await "$PD/daemon.queued.$1.reached" && : > "$PD/daemon.queued.$1.go"; }
# a request in the background: NAME CRED ROUTE JSON [headers...]; $S/NAME.{code,body}, $S/NAME.done at its end
bg() {
  local n=$1 c=$2 route=$3 j=$4; shift 4
  (curl -sS -m 120 -o "$S/$n.body" -w '%{http_code} %{content_type}' -H "$(auth "$c")" -H 'Content-Type: application/json' \
     "$@" --data-binary "$j" "$URL$route" > "$S/$n.code" 2>"$S/$n.err"; : > "$S/$n.done") &
}
done_wait() { local n; for n in "$@"; do await "$S/$n.done" || return 1; done; }
tcall() { # NAME CRED ID TASK
  bg "$1" "$2" /mcp/ "{\"jsonrpc\":\"2.0\",\"id\":$3,\"method\":\"tools/call\",\"params\":{\"name\":\"tools_decho\",\"arguments\":{\"who\":\"$1\"},\"_meta\":{\"world/task_id\":\"$4\"}}}" \
    -H 'Accept: application/json, text/event-stream'
}
mcancel() { # CRED ID: notifications/cancelled, answered at once
  mcp "$1" "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":$2,\"reason\":\"stop $2\"}}"
}
A2A_HDRS=(-H 'A2A-Version: 1.0')
send_task() { # NAME CRED TASK
  bg "$1" "$2" /a2a/ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{\"message\":{\"messageId\":\"m-$3\",\"taskId\":\"$3\",\"role\":\"ROLE_USER\",\"parts\":[{\"data\":{\"who\":\"$1\"}}],\"metadata\":{\"skill_id\":\"tools.echo\"}}}}" "${A2A_HDRS[@]}"
}
cancel_task() { # NAME CRED TASK
  bg "$1" "$2" /a2a/ "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"CancelTask\",\"params\":{\"id\":\"$3\"}}" "${A2A_HDRS[@]}"
}
body() { local b; b=$(cat "$S/$1.body"); if printf '%s' "$b" | grep -q '^data: '; then printf '%s' "$b" | sed -n 's/^data: //p'; else printf '%s' "$b"; fi; }
committed() { body "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["isError"] is False)' 2>/dev/null; }

daemon_setup
CRED_A2=$(printf '5%.0s' $(seq 64)) # a second session of episode ep-a (CRED's)
"$FIXTURE" session "$DB" "$CRED_A2" ep-a '[]' +3600 || bail "fixture session"

# ---- MCP ----
S=$T/mcp; PD=$T/pause; mkdir -p "$S" "$PD"
export WORLD_TEST_PAUSE=daemon.worker@1,daemon.queued@2,daemon.queued@3,daemon.queued@4 WORLD_TEST_PAUSE_DIR=$PD
daemon_start --capacity 1 --session-share 1 || bail "daemon did not start"
unset WORLD_TEST_PAUSE WORLD_TEST_PAUSE_DIR
N0=$(entries)
tcall h1 "$CRED_GRANT" 1 h1 # ep-b's call holds the only worker
await "$PD/daemon.worker.1.reached"
tcall t1 "$CRED" 7 q1; queued 2
tcall t2 "$CRED" 8 q2; queued 3
mcancel "$CRED" 7
is "$STATUS" 202 "MCP: notifications/cancelled of A's queued request id 7 is answered 202 at once"
like "$(cat "$T/err")" "cancel episode=ep-a request_id=7: no call of this session in flight has that id; kept for its requests waiting for a call worker" \
  "... the log says it is kept for A's requests waiting for a worker"
mcancel "$CRED_GRANT" 8
is "$STATUS" 202 "cross-tenant: another episode's session cancels request id 8 (202)"
mcancel "$CRED_A2" 8
is "$STATUS" 202 "cross-tenant: another session of A's own episode cancels request id 8 (202)"
like "$(cat "$T/err")" "cancel episode=ep-a request_id=8: no call of this session in flight has that id \(ignored\)" \
  "... ignored: that credential has no request waiting"
mcancel "$CRED" 9
tcall t3 "$CRED" 9 q3; queued 4 # sent after the cancel of its id
ok "$([ ! -e "$S/t1.done" ] && [ ! -e "$S/t2.done" ] && [ ! -e "$S/h1.done" ]; echo $?)" "every call is still held or queued"
: > "$PD/daemon.worker.1.go"
done_wait h1 t1 t2 t3
is "$(cat "$S/t1.code")/$(wc -c < "$S/t1.body" | tr -d ' ')" "200 text/event-stream/0" \
  "the cancelled queued request gets no response (an empty event stream)"
is "$(outcome mcp:ep-a:q1)" "cancelled" "journal: its outcome is cancelled"
like "$(cat "$T/err")" "cancel episode=ep-a request_id=7: cancelled while it waited for a call worker; it starts cancelled" \
  "the log: it started cancelled when a worker took it"
like "$(cat "$T/err")" "tools/call cancelled request_id=7 tool=tools.echo episode=ep-a: call cancelled before its capsule started; nothing ran; reason: stop 7" \
  "... its capsule never started (nothing ran), with the canceller's reason"
is "$(committed h1)/$(committed t2)/$(committed t3)" "True/True/True" \
  "controls: the holder, A's id 8 (cancelled only by other sessions) and A's id 9 (sent after a cancel of its id) commit"
is "$(outcome mcp:ep-a:q2)/$(outcome mcp:ep-a:q3)" "committed/committed" "... journal committed for both"
is "$(( $(entries) - N0 ))" 3 "the log grew by three entries: none for the cancelled call"
is "$(q "SELECT count(*) FROM journal WHERE subject = 'mcp:ep-a:q1' AND phase = 'outcome' AND status = 'committed'")" 0 \
  "... and nothing of it committed"
like "$(cat "$T/err")" "cancel key=i:9: no call with that id waited for a worker; the cancel is dropped" \
  "the cancel of id 9 is dropped once A's earlier requests ended (it reached no later request)"
# a retry of the cancelled task id runs and commits
mcp "$CRED" '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"tools_decho","arguments":{"who":"t1"},"_meta":{"world/task_id":"q1"}}}'
is "$STATUS/$(sse_json | jget result.isError)" "200/false" "a retry of the cancelled task id commits"
is "$(capsules "$DPID")" 0 "no capsule process is left"
daemon_stop
is "$DRC" 0 "the daemon stops cleanly"

# ---- A2A ----
S=$T/a2a; rm -rf "$PD"; mkdir -p "$S" "$PD"
export WORLD_TEST_PAUSE=daemon.worker@1,daemon.queued@2,daemon.queued@3,daemon.queued@4,daemon.queued@5 WORLD_TEST_PAUSE_DIR=$PD
daemon_start --capacity 1 --session-share 1 || bail "daemon did not start"
unset WORLD_TEST_PAUSE WORLD_TEST_PAUSE_DIR
N0=$(entries)
tcall h2 "$CRED_GRANT" 1 h2
await "$PD/daemon.worker.1.reached"
send_task a1 "$CRED" qa1; queued 2
send_task a2 "$CRED" qa2; queued 3
cancel_task xb "$CRED_GRANT" qa2; queued 4 # another episode names A's task
cancel_task ca "$CRED" qa1; queued 5
like "$(cat "$T/err")" "cancel episode=ep-a task=qa1: no call in flight; kept for this episode's calls waiting for a call worker" \
  "A2A: CancelTask of the queued task is kept for it on the HTTP thread, before it queues itself"
ok "$([ ! -e "$S/a1.done" ] && [ ! -e "$S/ca.done" ]; echo $?)" "the task and its cancel are both still queued"
: > "$PD/daemon.worker.1.go"
done_wait h2 a1 a2 xb ca
st() { body "$1" | jget "$2"; }
is "$(st ca result.status.state)" "TASK_STATE_CANCELED" "CancelTask answers the queued task canceled"
is "$(st a1 result.task.status.state)" "TASK_STATE_CANCELED" "its SendMessage answers the task canceled"
like "$(st a1 result.task.status.message.parts.0.text)" "Cancelled: .*call cancelled before its capsule started; nothing ran" \
  "... its capsule never started"
http POST /a2a/ -H "$(auth "$CRED")" -H 'Content-Type: application/json' "${A2A_HDRS[@]}" \
  --data-binary '{"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":"qa1"}}'
is "$(jget result.status.state <<<"$BODY")" "TASK_STATE_CANCELED" "GetTask afterwards says canceled"
is "$(outcome a2a:ep-a:qa1)" "cancelled" "journal: the task's outcome is cancelled"
is "$(st a2 result.task.status.state)/$(outcome a2a:ep-a:qa2)" "TASK_STATE_COMPLETED/committed" \
  "control: A's other queued task, cancelled only by another episode, completes"
is "$(st xb error.code)" "-32001" "... that episode's CancelTask finds no such task of its own (not found)"
is "$(( $(entries) - N0 ))" 2 "the log grew by two entries (the holder's and qa2's): none for the canceled task"
like "$(cat "$T/err")" "cancel episode=ep-a task=qa1: cancelled while it waited for a call worker; it starts cancelled" \
  "the log: the task started cancelled"
is "$(capsules "$DPID")" 0 "no capsule process is left"
daemon_stop
is "$DRC" 0 "the daemon stops cleanly"
run_capture out err rc "$WORLDD" scan --store "$DB" --objects
is "$rc:$out" "0:" "worldd scan --objects: the store scans clean"
done_testing
