#!/bin/bash
# tests/daemon/pg_serve.sh: worldd serve on a postgresql:// store (issue 26;
# docs/daemon.md "On PostgreSQL"), on a throwaway cluster. The store: the
# daemon tests' fixture (tools.echo, tests.secret, sessions $CRED and
# $CRED_GRANT) copied into a database of a role with a password, given to
# serve in a file (--store-password-file) and to the verbs the same way.
#   - serve starts on the URI and names it without the password (log,
#     stdout, /proc/PID/cmdline of the daemon and of its spawner);
#   - a pure call and an effectful one over MCP commit entries 1 and 2 in
#     PostgreSQL (`log get` on the URI; the effect charged in
#     episode_usage); a task id retried runs once (replayed, no entry 3);
#   - world://why/2 answers with every link verified;
#   - the operator token: the daemon writes this host's token file
#     (`worldd token path` names it, mode 0600) and the token reads
#     /v1/head (a wrong one: 401); `token rotate` (attended, through a pseudo-terminal) makes
#     the running daemon refuse the old one and take the new;
#   - `session revoke` on the URI: the next call with that credential is
#     refused 401 (the control: the same credential's call just before);
#   - PostgreSQL stopped mid-service (pg_ctl stop -m fast, 5 s down):
#     calls are answered at once with HTTP 503 StoreUnavailable and
#     Retry-After (not a hang, not 500), nothing of them is committed;
#     once the server runs again the same daemon commits the next call
#     with no restart; `worldd scan` of the URI is clean and no journal
#     intent is left open;
#   - outages settle (issue 44): the server stopped between an effect's
#     handler and the call's commit (pause point coord.before_commit). The
#     control, the hold off (WORLD_TEST_HOLD=0): 503, and the retry refused
#     HeadConflict "indeterminate", two intents open. With the hold: the call
#     waits, /v1/ready 503 ready false, /v1/health 200 ready false, an
#     operator read and tools/list 503 StoreUnavailable (JSON-RPC), then the
#     server back: the first operator read 200, the call answered committed,
#     its retry replayed, committed once, no intent open, ready true.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/pg_cluster.sh"
. "$top_srcdir/tests/daemon/lib.sh"
PTY="$top_srcdir/tests/publish/pty.py"
daemon_setup
trap 'daemon_kill; pg_cluster_cleanup; rm -rf "$T"' EXIT
chmod 755 "$T"
pg_cluster_or_skip "worldd serve on PostgreSQL"
psqlc() { "$PG_BIN/psql" -X -q -A -t -h "$PG_SOCK" -p "$PG_PORT" -U worldsu "$@"; }

# tests.read (issue 44): one Workspace.Read at cost 1, visible at access cost 0
FIXTURE_EFFECTFUL='{"cost":1,"effect":"Workspace.Read","scope":"worktree"}' \
  "$FIXTURE" publish "$DB" "$AILANG_LITE" tests.read "$top_srcdir/packages/se-tools/examples/effect-plan-read.ail" \
  '{"cost":0,"effect":"Workspace.Read","scope":"worktree"}' || bail "fixture publish tests.read"
CRED_RD=$(printf '7%.0s' $(seq 64))
"$FIXTURE" session "$DB" "$CRED_RD" ep-h '[{"budget":100,"effect":"Workspace.Read","scope":"worktree"}]' +3600 || bail "fixture session"
PW='s3rve:Pw@x%1'
psqlc -d world -c "CREATE ROLE wu LOGIN PASSWORD '$PW'" || bail "create role"
psqlc -d world -c "CREATE DATABASE sv OWNER wu" && psqlc -d sv -c "ALTER SCHEMA public OWNER TO wu" || bail "create sv"
printf '%s\n' "$PW" > "$T/pw"
chmod 600 "$T/pw"
U="postgresql://wu@$PG_TCP/sv"
PG=(--store "$U" --store-password-file "$T/pw")
"$WORLDD" store copy --dest-password-file "$T/pw" "$DB" "$U" > "$T/copy.out" 2> "$T/copy.err" ||
  bail "store copy into PostgreSQL: $(cat "$T/copy.err")"
# every host keeps its interpreter cache and its token file here
XDG_CACHE_HOME=$T/cache; export XDG_CACHE_HOME
SQLITE_DB=$DB
DB=$U # daemon_start's --store
mkdir -p "$T/ws/ep-h" && chmod 700 "$T/ws" "$T/ws/ep-h" && echo hello > "$T/ws/ep-h/README.md"
daemon_start --store-password-file "$T/pw" --workspace-root "$T/ws" || bail "worldd serve on the URI did not start"
ok 0 "worldd serve runs on the postgresql:// store"
like "$(cat "$T/err")" "worldd start store=postgresql://wu@127.0.0.1:$PG_PORT/sv " "its start line names the store postgresql://USER@HOST:PORT/DB"
SP=$(ps -o pid= --ppid "$DPID" | head -1 | tr -d ' ')
leaks=$(cat "$T/out" "$T/err" "/proc/$DPID/cmdline" ${SP:+"/proc/$SP/cmdline"} 2>/dev/null | grep -c -F "$PW")
is "$leaks" 0 "the password is in no line the daemon printed nor in its or its spawner's command line"
ok "$(grep -q -F "$PW" "$T/pw"; echo $?)" "... (control: the file given holds it)"

call() { # CRED ID NAME ARGS [TASK]: one tools/call over MCP
  local meta=""
  [ -n "${5:-}" ] && meta=",\"_meta\":{\"world/task_id\":\"$5\"}"
  mcp "$1" "{\"jsonrpc\":\"2.0\",\"id\":$2,\"method\":\"tools/call\",\"params\":{\"name\":\"$3\",\"arguments\":$4$meta}}"
}
entries() { psqlc -d sv -c "SELECT count(*) FROM log_entries"; }

# ---- calls commit in PostgreSQL
call "$CRED" 1 tools_decho '{"n":1}' t1
is "$STATUS:$(sse_json | jget result.structuredContent.echo.n)" "200:1" "a pure call over MCP: answered"
is "$(sse_json | jget 'result._meta.world/invocation.entry_index')" 1 "... committed as entry 1"
run_capture out err rc "$WORLDD" log get "${PG[@]}" 1
is "$rc" 0 "worldd log get on the URI reads entry 1 ($err)"
call "$CRED_GRANT" 2 tests_dsecret '{"n":2}' s1
is "$STATUS:$(sse_json | jget 'result._meta.world/invocation.entry_index')" "200:2" "an effectful call (Secret.Read): committed as entry 2"
is "$(psqlc -d sv -c "SELECT count(*) FROM episode_usage WHERE episode = 'ep-b'")" 1 "... its effect charged to episode ep-b in PostgreSQL"
call "$CRED" 3 tools_decho '{"n":1}' t1
is "$STATUS:$(sse_json | jget 'result._meta.world/invocation.replayed'):$(sse_json | jget 'result._meta.world/invocation.entry_index')" \
  "200:true:1" "the task id t1 sent again: replayed as entry 1"
is "$(entries)" 2 "... and nothing more committed (2 entries)"

# ---- provenance over MCP
mcp "$CRED_GRANT" '{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"world://why/2"}}'
WHY=$(sse_json | jget result.contents.0.text)
is "$(jget verified <<<"$WHY"):$(jget broken <<<"$WHY"):$(jget unreachable <<<"$WHY")" "10:0:0" \
  "world://why/2 (ep-b's entry): all 10 links verified, none broken or unreachable"
like "$WHY" '"name":"interpreter","ref":"sha256:[0-9a-f]{64}","ok":true' "... the interpreter among them (from this host's cache of the archive row)"

# ---- the operator token
run_capture out err rc "$WORLDD" token path "${PG[@]}"
TF=$out
is "$rc:$TF" "0:$T/cache/world/operator-tokens/wu@127.0.0.1_${PG_PORT}_sv.operator-token" \
  "worldd token path names this host's token file for the URI"
like "$(cat "$T/err")" "operator token: $TF " "... the file the daemon wrote"
is "$(stat -c %a "$TF" 2>/dev/null):$(stat -c %a "$T/cache/world/operator-tokens" 2>/dev/null)" "600:700" "... mode 0600, in a directory of mode 0700"
TOKEN=$(cat "$TF")
code() { curl -sS -m 30 -o /dev/null -w '%{http_code}' -H "$(auth "$1")" "$URL/v1/head" 2>/dev/null; }
is "$(code "$TOKEN")" 200 "the token reads /v1/head"
is "$(code "$(printf '9%.0s' $(seq 64))")" 401 "... a token that is not it: 401"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '[y/N] ' --answer y --out "$T/rot.out" --err "$T/rot.err" --tty "$T/rot.tty" -- \
  "$WORLDD" token rotate "${PG[@]}"
is "$?" 0 "worldd token rotate on the URI, confirmed at a terminal: exit 0 ($(cat "$T/rot.err"))"
NEW=$(cat "$T/rot.out")
is "$(cat "$TF")" "$NEW" "... the new token printed once and written to the file"
is "$(code "$TOKEN"):$(code "$NEW")" "401:200" "the running daemon refuses the old token and takes the new one"
CI=true run_capture out err rc "$WORLDD" token rotate "${PG[@]}"
is "$rc:$(cat "$TF")" "20:$NEW" "token rotate with CI set: refused (exit 20), the file unchanged"

# ---- revoke from another process
call "$CRED" 5 tools_decho '{"n":5}'
is "$STATUS:$(sse_json | jget 'result._meta.world/invocation.entry_index')" "200:3" "control: \$CRED's call commits (entry 3) just before the revoke"
run_capture out err rc "$WORLDD" session revoke "${PG[@]}" --episode ep-a
is "$rc" 0 "worldd session revoke on the URI: exit 0 ($err)"
call "$CRED" 6 tools_decho '{"n":6}'
is "$STATUS:$(jget error.class <<<"$BODY")" "401:SessionUnknown" "the next call with the revoked credential: 401 (the session is gone: SessionUnknown)"
is "$(entries)" 3 "... nothing committed for it"

# ---- PostgreSQL stopped for 5 s
call "$CRED_GRANT" 7 tools_decho '{"n":7}'
is "$STATUS" 200 "control: a call commits just before the server stops"
bash -c "$PG_STOP" || bail "pg_ctl stop"
s0=$(date +%s%N)
call "$CRED_GRANT" 8 tools_decho '{"n":8}' down-1
ms=$(( ($(date +%s%N) - s0) / 1000000 ))
is "$STATUS:$(sse_json | jget result.isError):$(sse_json | jget 'result._meta.world/error.class')" "503:true:StoreUnavailable" \
  "the server down: a call answered HTTP 503, a JSON-RPC isError result of class StoreUnavailable (in $ms ms)"
ok "$([ "$ms" -lt 15000 ]; echo $?)" "... at once, not after a hang (a guard of 15 s, not a timing bound)"
ra=$(curl -sS -m 30 -D - -o /dev/null -H "$(auth "$CRED_GRANT")" "${MCP_HDRS[@]}" \
  --data-binary '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"tools_decho","arguments":{}}}' "$URL/mcp/" |
  tr -d '\r' | sed -n 's/^[Rr]etry-[Aa]fter: //p')
is "$ra" 1 "... with Retry-After: 1"
http GET /v1/log/1 -H "$(auth "$NEW")"
is "$STATUS" 503 "a read route while the server is down: 503 too"
sleep 5
bash -c "$PG_START" || bail "pg_ctl start"
call "$CRED_GRANT" 10 tools_decho '{"n":10}' down-1
is "$STATUS:$(sse_json | jget result.structuredContent.echo.n)" "200:10" "the server back: the same daemon answers the next call, no restart"
is "$(sse_json | jget 'result._meta.world/invocation.entry_index')" 5 "... committed as entry 5: the task id down-1 had committed nothing while the server was down"
is "$(entries)" 5 "five entries in all: every acknowledged call once, none of the refused ones"
is "$(psqlc -d sv -c "SELECT count(*) FROM journal i WHERE phase = 'intent' AND NOT EXISTS (SELECT 1 FROM journal o WHERE o.phase = 'outcome' AND o.intent_id = i.id)")" 0 \
  "no journal intent is left without its outcome"
run_capture out err rc "$WORLDD" scan "${PG[@]}"
is "$rc:$out" "0:" "worldd scan of the URI: clean"
daemon_stop
is "$DRC" 0 "the daemon stops cleanly"

# ---- serve never makes a store in an empty database (issue 44 item 4)
psqlc -d world -c "CREATE DATABASE empty1 OWNER wu" && psqlc -d empty1 -c "ALTER SCHEMA public OWNER TO wu" || bail "create empty1"
EU="postgresql://wu@$PG_TCP/empty1"
run_capture out err rc "$WORLDD" serve --store "$EU" --store-password-file "$T/pw" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0
is "$rc:$(printf '%s\n' "$err" | grep -c .)" "4:1" "serve on an empty database: exit 4, one line"
like "$err" "an empty database, no World store in it; nothing created \\(make one first: worldd store copy DB $EU, or worldd epoch bootstrap --store $EU\\)" \
  "... pointing at store copy and epoch bootstrap"
is "$(psqlc -d empty1 -c "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = 'public'")" 0 "... and no table made there"
run_capture out err rc "$WORLDD" epoch bootstrap --store "$EU" --store-password-file "$T/pw" --ailang-bin "$AILANG_LITE"
ok "$([ "$rc" = 0 ] && [ "$(psqlc -d empty1 -c "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = 'public'")" -gt 0 ]; echo $?)" \
  "control: epoch bootstrap makes the store in it ($err)"

# ---- outages settle (issue 44 item 2): the server stops between an
# effect's handler finishing and the call's commit (the pause point
# coord.before_commit holds the call there while the server is stopped)
await() { local i; for i in $(seq 1 1200); do [ -e "$1" ] && return 0; sleep 0.05; done; diag "waited 60 s for $1"; return 1; }
rcall() { # ID TASK OUTFILE: tests.read in the background, its answer in OUTFILE
  curl -sS -m 60 -o "$3" -w '%{http_code}' -H "$(auth "$CRED_RD")" "${MCP_HDRS[@]}" --data-binary \
    "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"tests_dread\",\"arguments\":{\"path\":\"README.md\"},\"_meta\":{\"world/task_id\":\"$2\"}}}" \
    "$URL/mcp/" > "$3.code" 2>/dev/null
}
body() { sed -n 's/^data: //p' "$1" | grep . || cat "$1"; }
open_intents() { psqlc -d sv -c "SELECT count(*) FROM journal i WHERE phase = 'intent' AND subject LIKE '%$1%' AND NOT EXISTS (SELECT 1 FROM journal o WHERE o.phase = 'outcome' AND o.intent_id = i.id)"; }
if ! grep -q -- '-DWORLD_TEST_HOOKS=1' "$top_builddir/Makefile"; then
  skip "built without --enable-test-hooks (no pause points)" "outages settle: the held outcome and its control"
  done_testing; exit
fi
TOKEN=$(cat "$TF")
# the control: the hold turned off (WORLD_TEST_HOLD=0, test builds) is the
# behaviour before issue 44 -- a 503, and the retry refused as indeterminate
PD=$T/pause0; mkdir -p "$PD"
export WORLD_TEST_PAUSE=coord.before_commit@1 WORLD_TEST_PAUSE_DIR=$PD WORLD_TEST_HOLD=0
daemon_start --store-password-file "$T/pw" --workspace-root "$T/ws" || bail "serve (control)"
unset WORLD_TEST_PAUSE WORLD_TEST_PAUSE_DIR WORLD_TEST_HOLD
rcall 20 held-0 "$T/h0" & C=$!
await "$PD/coord.before_commit.1.reached"
bash -c "$PG_STOP" || bail "pg_ctl stop"
: > "$PD/coord.before_commit.1.go"
wait $C
is "$(cat "$T/h0.code"):$(body "$T/h0" | jget 'result._meta.world/error.class')" "503:StoreUnavailable" \
  "control (no hold): the effect ran, the server stopped before the commit: 503 StoreUnavailable"
bash -c "$PG_START" || bail "pg_ctl start"
retry() { # ID TASK OUTFILE: rcall again while it answers 503 (at most 20 times, as a client told Retry-After)
  local i; for i in $(seq 1 20); do rcall "$@"; [ "$(cat "$3.code")" != 503 ] && return 0; sleep 0.5; done
}
retry 21 held-0 "$T/h0r"
like "$(body "$T/h0r" | jget 'result.content.0.text')" "HeadConflict: task id of mcp:ep-h:held-0 has an indeterminate effect" \
  "control: its retry with the same task id is refused as indeterminate (the behaviour before issue 44)"
is "$(open_intents held-0)" 2 "control: two intents left open (the effect's and the invocation's)"
# what no daemon settles: listed, then settled by the operator (attended)
run_capture out err rc "$WORLDD" journal "${PG[@]}" --indeterminate
EID=$(sed -n 's/^indeterminate intent=\([0-9]*\) kind=effect subject=mcp:ep-h:held-0#.*/\1/p' <<<"$out")
like "$out" "indeterminate intent=$EID kind=effect subject=mcp:ep-h:held-0#e1 " "worldd journal --indeterminate lists the effect's intent"
CI=true run_capture out err rc "$WORLDD" journal settle "$EID" --as failed "${PG[@]}" --workspace-root "$T/ws"
is "$rc:$(open_intents held-0)" "20:2" "journal settle with CI=true: refused (exit 20), both intents still open"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --answer "settle intent $EID as failed" --out "$T/st.out" --err "$T/st.err" --tty "$T/st.tty" -- \
  "$WORLDD" journal settle "$EID" --as failed "${PG[@]}" --workspace-root "$T/ws"
is "$?" 0 "journal settle confirmed at a terminal: exit 0 ($(cat "$T/st.err"))"
EV=$(cat "$T/st.out")
like "$EV" "journal: the intent has no outcome; the call mcp:ep-h:held-0: its invocation intent has no outcome either" "... the evidence: the journal (nothing of the call committed)"
like "$EV" "request: sha256:[0-9a-f]{64} effect=Workspace.Read scope=worktree cost=1 payload=\\{\"op\":\"read\",\"path\":\"README.md\"\\}" "... the request"
like "$EV" "worktree: $T/ws/ep-h/README.md: 6 bytes, sha256:" "... and the worktree's file"
like "$EV" "settled intent=$EID as=failed invocation_intent=[0-9]+ record=sha256:" "... one line: settled, the invocation intent closed too"
is "$(open_intents held-0)" 0 "... no intent of held-0 is open"
retry 25 held-0 "$T/h0s"
is "$(cat "$T/h0s.code"):$(body "$T/h0s" | jget result.isError)" "200:false" "the task id settled failed: a retry runs the call again and commits"
daemon_stop

# the fix: the daemon holds the outcome and writes it when the server returns
PD=$T/pause1; mkdir -p "$PD"
export WORLD_TEST_PAUSE=coord.before_commit@1 WORLD_TEST_PAUSE_DIR=$PD
daemon_start --store-password-file "$T/pw" --workspace-root "$T/ws" || bail "serve (hold)"
unset WORLD_TEST_PAUSE WORLD_TEST_PAUSE_DIR
http GET /v1/ready
is "$STATUS:$(jget ready <<<"$BODY")" "200:true" "GET /v1/ready with the server up: 200, ready true"
rcall 22 held-1 "$T/h1" & C=$!
await "$PD/coord.before_commit.1.reached"
bash -c "$PG_STOP" || bail "pg_ctl stop"
: > "$PD/coord.before_commit.1.go"
for _ in $(seq 1 200); do grep -q "held invocation_id=mcp:ep-h:held-1: its effect ran" "$T/err" && break; sleep 0.05; done
like "$(cat "$T/err")" "held invocation_id=mcp:ep-h:held-1: its effect ran, the store does not answer" "the server stopped after the handler: the daemon holds the outcome (one log line)"
http GET /v1/ready
is "$STATUS:$(jget ready <<<"$BODY"):$(jget class <<<"$BODY")" "503:false:StoreUnavailable" "GET /v1/ready while the server is down: 503, ready false"
http GET /v1/health
is "$STATUS:$(jget status <<<"$BODY"):$(jget ready <<<"$BODY")" "200:ok:false" "GET /v1/health meanwhile: 200 (the daemon lives), ready false"
http GET /v1/head -H "$(auth "$TOKEN")"
is "$STATUS:$(jget error.class <<<"$BODY")" "503:StoreUnavailable" "an operator-token read while the server is down: 503 StoreUnavailable, not 401"
mcp "$CRED_RD" '{"jsonrpc":"2.0","id":23,"method":"tools/list"}'
is "$STATUS:$(sse_json | jget error.code)" "503:-32603" "... tools/list: a JSON-RPC error in the 503, not a bare envelope"
like "$(sse_json | jget error.message)" "^StoreUnavailable: " "... naming StoreUnavailable"
ok "$(kill -0 $C 2>/dev/null; echo $?)" "the held call is not answered while the server is away"
sleep 3
bash -c "$PG_START" || bail "pg_ctl start"
http GET /v1/head -H "$(auth "$TOKEN")"
is "$STATUS" 200 "the server back: the first operator-token read answers 200 (no 401 SessionUnknown)"
wait $C
R=$(body "$T/h1")
is "$(cat "$T/h1.code"):$(jget result.isError <<<"$R"):$(jget 'result.structuredContent.world.effects.0.status' <<<"$R")" "200:false:ok" \
  "the held call is answered once the server returns: committed, its effect ok"
E1=$(jget 'result._meta.world/invocation.entry_index' <<<"$R")
like "$(cat "$T/err")" "held invocation_id=mcp:ep-h:held-1: outcome written \\(entry $E1\\)" "... the log says its outcome was written (entry $E1)"
retry 24 held-1 "$T/h1r"
R=$(body "$T/h1r")
is "$(jget 'result._meta.world/invocation.replayed' <<<"$R"):$(jget 'result._meta.world/invocation.entry_index' <<<"$R")" "true:$E1" \
  "a retry with the same task id answers the committed result (replayed, entry $E1)"
is "$(psqlc -d sv -c "SELECT count(*) FROM journal WHERE phase='outcome' AND status='committed' AND subject='mcp:ep-h:held-1'")" 1 "... committed exactly once"
is "$(open_intents held-1)" 0 "... and no intent of it is left open"
http GET /v1/ready
is "$STATUS:$(jget ready <<<"$BODY")" "200:true" "GET /v1/ready: 200, ready true again"
like "$(grep 'status=200' "$T/err" | grep -c 'invocation_id=mcp:ep-h:held-1')" '^[2-9]' "the request log names the invocation id of both calls"
daemon_stop
is "$DRC" 0 "the daemon stops cleanly"
done_testing
