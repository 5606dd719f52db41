#!/bin/bash
# tests/daemon/tasks.sh: the MCP Tasks extension (io.modelcontextprotocol/tasks,
# SEP-2663; daemon/mcp_tasks.h) over curl at protocol revision 2026-07-28,
# with packages/conformance published (world-publish, attended through a
# pty), and what a subscriptions/listen is told: task status
# (notifications/tasks, taskIds) and package resources list changes.
# A descriptor's execution.taskSupport makes a call a task for a request
# that declares the extension: created at once, polled (tasks/get, the
# result inlined), answered (tasks/update for a call that asks its caller),
# cancelled (tasks/cancel fires the call's cancel: nothing committed); the
# taskId is the call's World task id (its invocation mcp:EPISODE:TASKID, a
# client's world/task_id kept, a retry with it replayed). Controls: the
# same call without the extension runs on its request; another
# credential's tasks/get of the task is "unknown task"; tasks/* and a
# required-task tool without the extension are -32021; tasks/list and
# tasks/result are not methods; a listen without taskIds is told no task,
# one without resourcesListChanged no resources change.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
daemon_setup
PTY="$top_srcdir/tests/publish/pty.py"
SPIDS=()
trap 'for p in "${SPIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; daemon_kill; rm -rf "$T"' EXIT
daemon_start || bail "daemon did not start"
n=$(python3 -c 'import json,sys; print(len([e for e in json.load(open(sys.argv[1])) if "kind" not in e]))' "$top_srcdir/packages/conformance/transitions.json")
publish() { # MANIFEST N (relative to the repository root, or absolute)
  (cd "$top_srcdir" && env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '> ' --answer "publish $2 transitions to $DB" \
    --out "$T/pub.out" --err "$T/pub.err" --tty "$T/pub.tty" -- \
    "$top_builddir/cli/world-publish" transitions --store "$DB" --manifest "$1" --ailang-bin "$AILANG_LITE")
}
publish packages/conformance/transitions.json "$n"
is "$?" 0 "world-publish publishes packages/conformance ($n transitions)"

EXT='"extensions":{"io.modelcontextprotocol/tasks":{}}'
ENVT="\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{$EXT,\"elicitation\":{}}}"
ENV0='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
# m26 CRED METHOD PARAMS ENV [curl args]: a 2026-07-28 request; sets $J
m26() {
  local c=$1 meth=$2 p=$3 env=$4; shift 4
  mcp "$c" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$meth\",\"params\":{${p:+$p,}$env}}" \
    -H 'MCP-Protocol-Version: 2026-07-28' -H "Mcp-Method: $meth" "$@"
  J=$(sse_json)
}
call() { m26 "$CRED" tools/call "\"name\":\"$1\",\"arguments\":$2${4:+,$4}" "$3" -H "Mcp-Name: $1"; }
tget() { m26 "${2:-$CRED}" tasks/get "\"taskId\":\"$1\"" "$ENVT" -H "Mcp-Name: $1"; }
wait_for() { for _ in $(seq 1 300); do "$@" && return 0; sleep 0.1; done; return 1; }
settled() { tget "$1"; case "$(jget result.status <<<"$J")" in completed|failed|cancelled) return 0;; esac; return 1; }
entries() { http GET /v1/log -H "$(auth "$CRED")"; python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))' <<<"$BODY"; }
listen() { # FILE ID FILTER ENV
  curl -sS -N -m 120 "$URL/mcp/" -H "$(auth "$CRED")" "${MCP_HDRS[@]}" -H 'MCP-Protocol-Version: 2026-07-28' \
    -H 'Mcp-Method: subscriptions/listen' \
    --data-binary "{\"jsonrpc\":\"2.0\",\"id\":$2,\"method\":\"subscriptions/listen\",\"params\":{\"notifications\":$3,$4}}" \
    > "$T/$1" 2>/dev/null &
  SPIDS+=($!)
}

# ---- server/discover names the extension ----
m26 "$CRED" server/discover '' "$ENV0"
is "$(jget result.capabilities.extensions <<<"$J"):$(jget result.capabilities.tasks <<<"$J")" \
  '{"io.modelcontextprotocol/tasks": {}}:null' "server/discover: capabilities.extensions names io.modelcontextprotocol/tasks (no capabilities.tasks)"

# ---- package resources: a listen asking for resources is told of a publish ----
listen lr 71 '{"resourcesListChanged":true}' "$ENV0"
listen lx 72 '{"toolsListChanged":true}' "$ENV0"
wait_for grep -q acknowledged "$T/lr" && wait_for grep -q acknowledged "$T/lx"
ok $? "two listens are open: resources, tools only"
cat > "$T/res.json" <<'EOF'
[{"kind": "resource", "uri": "test://tasks-sh", "name": "tasks.sh", "description": "A resource published while listens are open.", "mimeType": "text/plain", "text": "hello"}]
EOF
publish "$T/res.json" 0
is "$?" 0 "world-publish publishes one more package resource (no transition)"
wait_for grep -q 'resources/list_changed' "$T/lr"
ok $? "the resources listen is sent notifications/resources/list_changed for the package resource"
like "$(grep resources/list_changed "$T/lr")" '"io.modelcontextprotocol/subscriptionId":71' "... with its subscription id"
sleep 0.5
unlike "$(cat "$T/lx")" 'resources/list_changed' "control: the tools-only listen is not told of it"

# ---- a task: created, polled, its result inlined; the taskId is the call's task id ----
before=$(entries)
call slow_compute '{"seconds":2,"label":"t1"}' "$ENVT"
tid=$(jget result.taskId <<<"$J")
is "$STATUS $(jget result.resultType <<<"$J") $(jget result.status <<<"$J")" "200 task working" \
  "tools/call of slow_compute (taskSupport optional) with the extension: a CreateTaskResult, working"
is "$(jget result.ttlMs <<<"$J"):$(jget result.pollIntervalMs <<<"$J"):$(jget result.content <<<"$J")" "600000:250:null" \
  "... ttlMs and pollIntervalMs, and no result in it"
# the status notifications of that task, on a listen naming it
listen lt 73 "{\"taskIds\":[\"$tid\"]}" "$ENVT"
listen ln 74 '{"toolsListChanged":true}' "$ENVT"
wait_for grep -q acknowledged "$T/lt"
like "$(grep acknowledged "$T/lt")" "\"taskIds\":\\[\"$tid\"\\]" "a listen naming the task is acknowledged with its taskIds"
wait_for settled "$tid"
is "$(jget result.status <<<"$J")" completed "tasks/get: the task completes"
is "$(jget result.result.content.0.text <<<"$J")" "slow_compute t1: done after 2 s" "... its result inlined (the call's content)"
is "$(jget result.result._meta.world/invocation.invocation_id <<<"$J")" "mcp:ep-a:$tid" \
  "... its invocation is mcp:EPISODE:TASKID: the taskId is the call's World task id"
is "$(entries)" "$((before + 1))" "... and it committed one log entry"
wait_for grep -q '"status":"completed"' "$T/lt"
ok $? "the listen naming it is sent notifications/tasks with status completed"
like "$(grep '"status":"completed"' "$T/lt")" "\"method\":\"notifications/tasks\".*\"taskId\":\"$tid\".*\"io.modelcontextprotocol/subscriptionId\":73" \
  "... naming the task, with its subscription id"
unlike "$(cat "$T/ln")" 'notifications/tasks' "control: a listen that names no task is told of none"
tget "$tid" "$CRED_GRANT"
is "$(jget error.code <<<"$J")" -32602 "control: another credential's tasks/get of the task: -32602 unknown task"

# ---- the client's world/task_id is the taskId; a retry with it replays ----
m26 "$CRED" tools/call '"name":"slow_compute","arguments":{"seconds":1,"label":"t2"}' \
  "\"_meta\":{\"world/task_id\":\"tasks-sh.mine-1\",\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{$EXT}}" \
  -H 'Mcp-Name: slow_compute'
is "$(jget result.taskId <<<"$J")" tasks-sh.mine-1 "a client's world/task_id is the taskId"
wait_for settled tasks-sh.mine-1
is "$(jget result.status <<<"$J")" completed "... the task completes"
m26 "$CRED" tools/call '"name":"slow_compute","arguments":{"seconds":1,"label":"t2"}' \
  '"_meta":{"world/task_id":"tasks-sh.mine-1","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}' \
  -H 'Mcp-Name: slow_compute'
is "$(jget result.resultType <<<"$J") $(jget result._meta.world/invocation.replayed <<<"$J") $(jget result._meta.world/invocation.invocation_id <<<"$J")" \
  "complete true mcp:ep-a:tasks-sh.mine-1" "the same task id again, without the extension: the committed result, replayed"

# ---- cancelled: nothing committed ----
before=$(entries)
call slow_compute '{"seconds":2,"label":"t3"}' "$ENVT"
cid=$(jget result.taskId <<<"$J")
m26 "$CRED" tasks/cancel "\"taskId\":\"$cid\"" "$ENVT" -H "Mcp-Name: $cid"
is "$STATUS $(jget result.resultType <<<"$J"):$(jget result.taskId <<<"$J"):$(jget result.status <<<"$J")" "200 complete:null:null" \
  "tasks/cancel: an empty acknowledgement (resultType complete, no task envelope)"
wait_for settled "$cid"
is "$(jget result.status <<<"$J")" cancelled "the cancelled task settles cancelled"
is "$(entries)" "$before" "... and nothing of it was committed"
m26 "$CRED" tasks/cancel "\"taskId\":\"$cid\"" "$ENVT" -H "Mcp-Name: $cid"
is "$(jget result.resultType <<<"$J")" complete "tasks/cancel of a task that is over: the same acknowledgement"

# ---- a task that asks its caller: input_required, answered by tasks/update ----
call confirm_delete '{"filename":"x.txt"}' "$ENVT"
qid=$(jget result.taskId <<<"$J")
asked() { tget "$qid"; [ "$(jget result.status <<<"$J")" = input_required ]; }
wait_for asked
is "$(jget result.inputRequests.confirm.method <<<"$J")" elicitation/create "a task whose call asks: input_required, its inputRequests shown"
m26 "$CRED" tasks/update "\"taskId\":\"$qid\",\"inputResponses\":{\"confirm\":{\"action\":\"accept\",\"content\":{\"confirm\":true}}}" "$ENVT" -H "Mcp-Name: $qid"
is "$(jget result.resultType <<<"$J")" complete "tasks/update: acknowledged"
wait_for settled "$qid"
is "$(jget result.status <<<"$J"):$(jget result.result.content.0.text <<<"$J")" "completed:state-ok: 1 answers received" \
  "... the call ran with the answer and the task completes"

# ---- a protocol-level failure: failed, with a JSON-RPC error ----
call protocol_error_job '{}' "$ENVT"
pid=$(jget result.taskId <<<"$J")
wait_for settled "$pid"
is "$(jget result.status <<<"$J"):$(jget result.error.code <<<"$J"):$(jget result.result <<<"$J")" "failed:-32603:null" \
  "a call that fails before its commit (NotAnObject): the task fails with a JSON-RPC error, no result"

# ---- controls: the extension, the methods, the headers ----
call slow_compute '{"seconds":0,"label":"sync"}' "$ENV0"
is "$(jget result.resultType <<<"$J"):$(jget result.taskId <<<"$J"):$(jget result.content.0.text <<<"$J")" "complete:null:slow_compute sync: done after 0 s" \
  "control: the same tool without the extension runs on its request"
call greet '{"name":"x"}' "$ENVT"
is "$(jget result.resultType <<<"$J"):$(jget result.content.0.text <<<"$J")" "complete:Hello, x!" \
  "control: a tool that declares no task support runs on its request even with the extension"
call failing_job '{}' "$ENV0"
is "$STATUS $(jget error.code <<<"$J") $(jget error.data.requiredCapabilities.extensions <<<"$J")" \
  '400 -32021 {"io.modelcontextprotocol/tasks": {}}' "a required-task tool without the extension: 400, -32021, the extension required"
m26 "$CRED" tasks/get "\"taskId\":\"$tid\"" "$ENV0" -H "Mcp-Name: $tid"
is "$STATUS $(jget error.code <<<"$J")" "400 -32021" "tasks/get without the extension: 400, -32021"
m26 "$CRED" tasks/get "\"taskId\":\"$tid\"" "$ENVT" -H "Mcp-Name: other"
is "$STATUS $(jget error.code <<<"$J")" "400 -32020" "tasks/get whose Mcp-Name is not its taskId: 400, -32020"
for meth in tasks/list tasks/result; do
  m26 "$CRED" "$meth" "\"taskId\":\"$tid\"" "$ENVT" -H "Mcp-Name: $tid"
  is "$STATUS $(jget error.code <<<"$J")" "404 -32601" "$meth is not a method (SEP-2663 removed it): 404, -32601"
done
m26 "$CRED" subscriptions/listen "\"notifications\":{\"taskIds\":[\"$tid\"]}" "$ENV0"
is "$STATUS $(jget error.code <<<"$J")" "400 -32021" "a listen naming taskIds without the extension: 400, -32021"
# the stop with a task waiting for input and one running: it ends them and stops
call confirm_delete '{"filename":"y.txt"}' "$ENVT"
wid=$(jget result.taskId <<<"$J")
qid=$wid; wait_for asked
call slow_compute '{"seconds":2,"label":"at-stop"}' "$ENVT"
daemon_stop
is "$DRC" 0 "the daemon stops cleanly with a task waiting for input and one running"
like "$(cat "$T/err")" "task task_id=$wid status=cancelled" "... the one waiting for input ends cancelled"
run_capture out err rc "$WORLDD" scan --store "$DB"
is "$rc" 0 "worldd scan is clean ($out$err)"
done_testing
