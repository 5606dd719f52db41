#!/bin/bash
# Cancellation and progress over MCP (issue 22 item 4; docs/daemon.md,
# "Cancellation and progress"). The official MCP SDK client
# (tests/daemon/sdk-cancel.mjs): two sessions of two episodes each hold a
# tests.slow call with the same JSON-RPC request id in its capsule (pause
# point sup.running); A's AbortSignal sends notifications/cancelled; only
# A's call is cancelled (B's commits: the cross-tenant control); the
# cancelled request gets no response; a retry of its task id commits;
# progress events in stage order before the result, none without a token.
# Then, from the store: the journal's outcome of A's call is "cancelled",
# no log entry of it, no capsule process left, worldd scan clean.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
NPM="$top_srcdir/build/npm/node_modules"
if ! command -v node >/dev/null || [ ! -d "$NPM/@modelcontextprotocol/sdk" ]; then
  skip "node or the npm SDK packages are missing (scripts/install-test-deps.sh)" "SDK cancel"
  done_testing; exit
fi
if ! grep -q -- '-DWORLD_TEST_HOOKS=1' "$top_builddir/Makefile"; then
  skip "built without --enable-test-hooks (no pause points)" "SDK cancel"
  done_testing; exit
fi
kids() { # pid of every descendant of $1
  local p
  for p in $(ps -o pid= --ppid "$1" 2>/dev/null); do echo "$p"; kids "$p"; done
}
capsules() { # the daemon's descendants but its spawner
  local p n=0
  for p in $(kids "$1"); do [ "$(cat "/proc/$p/comm" 2>/dev/null)" = world-spawner ] || n=$((n + 1)); done
  echo "$n"
}
q() { "$SQLITE3_SHELL" "$DB" "$1"; }

daemon_setup
"$FIXTURE" publish "$DB" "$AILANG_LITE" tests.slow "$top_srcdir/tests/daemon/slow.ail" || bail "fixture publish slow"
PD=$T/pause; mkdir -p "$PD"
export WORLD_TEST_PAUSE=sup.running@1,sup.running@2 WORLD_TEST_PAUSE_DIR=$PD
daemon_start || bail "daemon did not start"
unset WORLD_TEST_PAUSE WORLD_TEST_PAUSE_DIR
mkdir -p "$T/node" && ln -s "$NPM" "$T/node/node_modules" && cp "$top_srcdir/tests/daemon/sdk-cancel.mjs" "$T/node/"
timeout 120 node "$T/node/sdk-cancel.mjs" "$URL" "$CRED" "$CRED_GRANT" "$PD" "$T/err" > "$T/sdk.tap" 2>&1
rc=$?
tap_relay "$T/sdk.tap"
is "$rc" 0 "the SDK cancel script exits 0"

# what the store says
is "$(q "SELECT o.status FROM journal i JOIN journal o ON o.intent_id = i.id WHERE i.phase = 'intent' AND i.subject = 'mcp:ep-a:tc1' ORDER BY o.id")" \
   "cancelled
committed" "journal: mcp:ep-a:tc1 was cancelled, then its retry committed"
is "$(q "SELECT o.status FROM journal i JOIN journal o ON o.intent_id = i.id WHERE i.phase = 'intent' AND i.subject = 'mcp:ep-b:tc1'")" \
   "committed" "journal: the other session's call of the same request id committed (control)"
# log entries: B's slow call, A's retry, two echo calls; the cancelled call none
is "$(q "SELECT count(*) FROM log_entries")" 4 "the log holds the four committed calls, nothing of the cancelled one"
like "$(cat "$T/err")" "rpc=tools/call,error=Cancelled" "the request log names the cancelled call"
like "$(cat "$T/err")" "tools/call cancelled request_id=[0-9]+ tool=tests.slow episode=ep-a: call cancelled during the pure run phase; capsule killed; reason: the user pressed stop" \
  "the daemon logs the cancel with the SDK's reason"
is "$(capsules "$DPID")" 0 "no capsule process is left"
run_capture out err rc "$WORLDD" scan --store "$DB" --objects
is "$rc:$out" "0:" "worldd scan --objects: the store scans clean"
daemon_stop
is "$DRC" 0 "the daemon stops cleanly"

# Progress of an effectful call (se-tools' ailang-read, a Workspace.Read
# effect, on the packages fixture's store), with curl: every stage in order
PFIX="$top_builddir/tests/packages/packages-fixture"
if [ -x "$PFIX" ]; then
  P=$T/pkg; mkdir -p "$P/ws/ep1/src" && printf 'module hello\n' > "$P/ws/ep1/src/hello.ail"
  PCRED=$("$PFIX" "$P" "$top_srcdir" ep1 "$top_srcdir/packages/se-tools/transitions.json" Workspace.Read=worktree:100) ||
    bail "packages fixture"
  DB0=$DB; DB=$P/world.db
  daemon_start --workspace-root "$P/ws" || bail "daemon did not start on the packages store"
  mcp "$PCRED" '{"jsonrpc":"2.0","id":"r1","method":"tools/call","params":{"name":"ailang-read","arguments":{"path":"src/hello.ail"},"_meta":{"progressToken":"pt-1"}}}' \
    -H 'MCP-Protocol-Version: 2025-11-25'
  is "$STATUS $CTYPE" "200 text/event-stream" "effectful call with a progressToken: an event stream"
  printf '%s' "$BODY" | sed -n 's/^data: //p' > "$T/events"
  is "$(python3 -c 'import json,sys
evs=[json.loads(l) for l in open(sys.argv[1])]
print(" ".join((e["params"]["message"].split(":")[0]+"/"+str(e["params"]["progress"])+"/"+str(e["params"]["total"])) if e.get("method") else "result" for e in evs))' "$T/events")" \
     "admitted/1/5 plan/2/5 effect/3/5 finish/4/5 commit/5/5 result" "effectful progress: admitted, plan, effect, finish, commit (of 5), then the result"
  like "$(sed -n 3p "$T/events")" '"message":"effect: effect [^ ]+ \(Workspace.Read\) succeeded"' "the effect stage names the effect and its status"
  like "$(tail -1 "$T/events")" '"id":"r1".*"isError":false' "the last event is the response to r1"
  daemon_stop
  is "$DRC" 0 "the daemon on the packages store stops cleanly"
  DB=$DB0
else
  skip "tests/packages/packages-fixture not built" "effectful progress"
fi

# 2026-07-28: closing the response stream is the cancel. A call with a
# progressToken (a live stream) is held in its capsule, its curl reads the
# admitted event and is killed; once released the call's next event finds
# the client gone and the call is cancelled before its commit (held at
# coord.before_commit until the daemon says so). Control: the 2025 revision
# does not treat a disconnect as a cancel (its call commits).
rm -f "$PD"/*
export WORLD_TEST_PAUSE=sup.running@1,coord.before_commit@1,sup.running@2,coord.before_commit@2 WORLD_TEST_PAUSE_DIR=$PD
daemon_start || bail "daemon did not start"
unset WORLD_TEST_PAUSE WORLD_TEST_PAUSE_DIR
N0=$(q "SELECT count(*) FROM log_entries")
gone_call() { # VERSION-HEADER META TASK K: a slow call whose client leaves at sup.running@K
  local meta=$2 task=$3 k=$4
  curl -sS -N -m 60 -X POST -H "$(auth "$CRED")" "${MCP_HDRS[@]}" -H "MCP-Protocol-Version: $1" -H 'Mcp-Method: tools/call' \
    -H 'Mcp-Name: tests_dslow' --data-binary "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"tests_dslow\",\"arguments\":{},\"_meta\":{$meta\"progressToken\":\"p$k\",\"world/task_id\":\"$task\"}}}" \
    "$URL/mcp/" > "$T/gone$k.out" 2>/dev/null &
  local cp=$! i
  for i in $(seq 1 1500); do [ -e "$PD/sup.running.$k.reached" ] && grep -q admitted "$T/gone$k.out" && break; sleep 0.02; done
  grep -q admitted "$T/gone$k.out"; ok $? "$1: the client has the admitted event while its call is held in its capsule"
  kill -KILL "$cp"; wait "$cp" 2>/dev/null
  : > "$PD/sup.running.$k.go"
  for i in $(seq 1 1500); do [ -e "$PD/coord.before_commit.$k.reached" ] && break; sleep 0.02; done
}
# notifications/cancelled naming nothing in flight, or malformed: ignored, 202 (the spec)
mcp "$CRED" '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope","reason":"x"}}'
is "$STATUS:$BODY" "202:" "notifications/cancelled of an id not in flight: 202, no body"
like "$(cat "$T/err")" "cancel episode=ep-a request_id=nope: no call of this session in flight has that id \\(ignored\\)" "... logged as ignored"
mcp "$CRED" '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"x":1}}}'
is "$STATUS:$BODY" "202:" "a malformed notifications/cancelled: 202, ignored"
mcp "$CRED_UNKNOWN" '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}'
is "$STATUS" "401" "notifications/cancelled without a live session credential: 401 (it cancels nothing)"
gone_call 2026-07-28 '"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},' dc1 1
for i in $(seq 1 1500); do grep -q "the client left before its end; its call is cancelled" "$T/err" && break; sleep 0.02; done
like "$(cat "$T/err")" "live response: the client left before its end; its call is cancelled" "2026-07-28: the daemon saw the client leave and cancelled its call"
: > "$PD/coord.before_commit.1.go"
for i in $(seq 1 1500); do [ -n "$(q "SELECT 1 FROM journal WHERE phase = 'outcome' AND subject = 'mcp:ep-a:dc1'")" ] && break; sleep 0.02; done
is "$(q "SELECT status FROM journal WHERE phase = 'outcome' AND subject = 'mcp:ep-a:dc1'")" "cancelled" "2026-07-28: its journal outcome is cancelled"
gone_call 2025-11-25 '' dc2 2
: > "$PD/coord.before_commit.2.go"
for i in $(seq 1 1500); do [ -n "$(q "SELECT 1 FROM journal WHERE phase = 'outcome' AND subject = 'mcp:ep-a:dc2'")" ] && break; sleep 0.02; done
is "$(q "SELECT status FROM journal WHERE phase = 'outcome' AND subject = 'mcp:ep-a:dc2'")" "committed" "control: under 2025-11-25 a disconnect is not a cancel (the call committed)"
is "$(q "SELECT count(*) FROM log_entries")" "$((N0 + 1))" "one entry: the 2025 call's, none of the cancelled one"
is "$(capsules "$DPID")" 0 "no capsule process is left"
daemon_stop
is "$DRC" 0 "the daemon stops cleanly"

# A2A: CancelTask of a working task, SubscribeToTask of a working task,
# streaming status updates, ListTasks order
if [ ! -d "$NPM/@a2a-js/sdk" ]; then
  skip "the npm package @a2a-js/sdk is missing" "A2A cancel"
  done_testing; exit
fi
rm -f "$PD"/*
export WORLD_TEST_PAUSE=sup.running@1,sup.running@2 WORLD_TEST_PAUSE_DIR=$PD
daemon_start || bail "daemon did not start"
unset WORLD_TEST_PAUSE WORLD_TEST_PAUSE_DIR
N0=$(q "SELECT count(*) FROM log_entries")
timeout 120 node "$T/node/sdk-cancel.mjs" "$URL" "$CRED" "$CRED_GRANT" "$PD" "$T/err" a2a > "$T/sdk.tap" 2>&1
rc=$?
tap_relay "$T/sdk.tap"
is "$rc" 0 "the SDK A2A cancel script exits 0"
is "$(q "SELECT o.status FROM journal i JOIN journal o ON o.intent_id = i.id WHERE i.phase = 'intent' AND i.subject = 'a2a:ep-a:ac1'")" \
   "cancelled" "journal: the cancelled task's outcome is cancelled"
is "$(q "SELECT count(*) FROM log_entries")" "$((N0 + 3))" "the log holds the three completed tasks (ar1, ac2, as1), nothing of the cancelled one"
is "$(capsules "$DPID")" 0 "no capsule process is left"
run_capture out err rc "$WORLDD" scan --store "$DB" --objects
is "$rc:$out" "0:" "worldd scan --objects: clean after the A2A cancel"
daemon_stop
is "$DRC" 0 "the daemon stops cleanly"
done_testing
