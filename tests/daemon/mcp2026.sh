#!/bin/bash
# MCP protocol revision 2026-07-28 beside 2025-11-25, 2025-06-18 and
# 2025-03-26 on the same /mcp/ (issue 22 item 1), chosen per request: a
# request whose params._meta names io.modelcontextprotocol/protocolVersion
# speaks 2026-07-28 (stateless: server/discover, no initialize, resultType,
# the routing headers); one without speaks the version of its
# MCP-Protocol-Version header. Bad input gets JSON-RPC errors and commits
# nothing. Then the v2 SDK client (@modelcontextprotocol/client 2.x),
# unmodified, pinned to 2026-07-28 and in 'auto' mode.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
daemon_setup
"$FIXTURE" publish "$DB" "$AILANG_LITE" tests.shape "$top_srcdir/tests/daemon/identity.ail" null \
  '{"type":"object","properties":{"ok":{"type":"boolean"},"n":{"type":"integer"}}}' || bail "fixture publish shape"
daemon_start || bail "daemon did not start"
ENV='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
m26() { # METHOD PARAMS_JSON_MEMBERS [curl args]: a 2026-07-28 request with its headers
  local meth=$1 p=$2; shift 2
  mcp "$CRED" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$meth\",\"params\":{${p:+$p,}$ENV}}" \
    -H 'MCP-Protocol-Version: 2026-07-28' -H "Mcp-Method: $meth" "$@"
}
entries() { "$SQLITE3_SHELL" -readonly "$DB" 'SELECT count(*) FROM log_entries' 2>/dev/null; }

m26 server/discover ''
J=$(sse_json)
is "$STATUS $(jget result.supportedVersions <<<"$J")" '200 ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]' "server/discover lists 2026-07-28 beside the 2025 revisions"
is "$(jget result.resultType <<<"$J") $(jget result.capabilities.tools.listChanged <<<"$J") $(jget result.capabilities.resources.listChanged <<<"$J") $(jget result.capabilities.prompts.listChanged <<<"$J")" \
  "complete true true true" "... resultType complete, tools, resources and prompts listChanged (subscriptions/listen sends them)"
like "$J" '"io.modelcontextprotocol/serverInfo":\{"name":"worldd"' "... and the server's identity in _meta"
m26 tools/list ''
J=$(sse_json)
is "$(jget result.resultType <<<"$J") $(jget result.cacheScope <<<"$J") $(jget result.ttlMs <<<"$J")" "complete private 0" \
  "tools/list (2026-07-28): resultType, cacheScope private, ttlMs 0 (a session's own view)"
like "$(jget result.tools <<<"$J")" '"name": "tools_decho"' "... lists tools_decho"
b=$(entries)
m26 tools/call '"name":"tools_decho","arguments":{"x":1}' -H 'Mcp-Name: tools_decho'
J=$(sse_json)
is "$(jget result.resultType <<<"$J") $(jget result.structuredContent.echo.x <<<"$J") $(jget result.isError <<<"$J")" "complete 1 false" "tools/call (2026-07-28) answers the output"
is "$(entries)" "$((b + 1))" "... and commits one log entry"
b=$(entries)
m26 tools/call '"name":"tools_decho","arguments":{"x":1}' -H 'Mcp-Name: tests_dshape'
is "$STATUS $(jget error.code <<<"$(sse_json)")" "400 -32020" "Mcp-Name disagreeing with params.name: 400, -32020 header mismatch"
mcp "$CRED" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{$ENV}}" -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call'
is "$STATUS $(jget error.code <<<"$(sse_json)")" "400 -32020" "Mcp-Method disagreeing with the method: -32020"
mcp "$CRED" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{$ENV}}" -H 'MCP-Protocol-Version: 2025-11-25' -H 'Mcp-Method: tools/list'
is "$STATUS $(jget error.code <<<"$(sse_json)")" "400 -32020" "MCP-Protocol-Version disagreeing with the envelope: -32020"
# the envelope: missing, or incomplete, is -32602 with HTTP 400
mcp "$CRED" '{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}' -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/list'
is "$STATUS $(jget error.code <<<"$(sse_json)") $(jget id <<<"$(sse_json)")" "400 -32602 7" "a 2026-07-28 request without the _meta envelope: 400, -32602, its id"
like "$(jget error.message <<<"$(sse_json)")" 'carries params._meta' "... saying what is missing"
mcp "$CRED" '{"jsonrpc":"2.0","id":1,"method":"server/discover"}' -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: server/discover'
is "$STATUS $(jget error.code <<<"$(sse_json)")" "400 -32602" "... without params at all: 400, -32602"
mcp "$CRED" '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}' -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/list'
is "$STATUS $(jget error.code <<<"$(sse_json)")" "400 -32602" "an envelope without its protocolVersion: 400, -32602"
mcp "$CRED" '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}' -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/list'
is "$STATUS $(jget error.code <<<"$(sse_json)")" "400 -32602" "an envelope without the client's capabilities: 400, -32602"
m26 server/discover '' -H 'X-Unused: control'
is "$STATUS $(jget result.resultType <<<"$(sse_json)")" "200 complete" "control: the same request with the whole envelope (no clientInfo) is served"
# versions: the body disagreeing with the header, or one the daemon does not speak
mcp "$CRED" '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}' -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/list'
is "$STATUS $(jget error.code <<<"$(sse_json)")" "400 -32020" "the envelope's revision disagreeing with MCP-Protocol-Version: 400, -32020"
mcp "$CRED" '{"jsonrpc":"2.0","id":31,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}' -H 'MCP-Protocol-Version: 2099-01-01' -H 'Mcp-Method: server/discover'
J=$(sse_json)
is "$STATUS $(jget error.code <<<"$J") $(jget id <<<"$J")" "400 -32022 31" "a revision the daemon does not speak: 400, -32022 (UnsupportedProtocolVersionError), its id"
is "$(jget error.data.supported <<<"$J") $(jget error.data.requested <<<"$J")" '["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"] 2099-01-01' \
  "... its data lists the supported revisions (server/discover's) and echoes the requested one"
# methods 2026-07-28 does not have: 404 with -32601; under 2025-11-25 the same methods still answer (control)
for meth in initialize ping logging/setLevel resources/subscribe resources/unsubscribe no/such; do
  m26 "$meth" '"uri":"world://log/1","level":"info","protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"x","version":"1"}'
  is "$STATUS $(jget error.code <<<"$(sse_json)")" "404 -32601" "$meth under 2026-07-28: 404, -32601"
done
mcp "$CRED" '{"jsonrpc":"2.0","id":1,"method":"ping"}' -H 'MCP-Protocol-Version: 2025-11-25'
is "$STATUS $(jget result <<<"$(sse_json)")" "200 {}" "control: ping under 2025-11-25 still answers {}"
mcp "$CRED" '{"jsonrpc":"2.0","id":1,"method":"no/such"}' -H 'MCP-Protocol-Version: 2025-11-25'
is "$STATUS $(jget error.code <<<"$(sse_json)")" "200 -32601" "control: an unknown method under 2025-11-25 keeps the 2025 answer (200, -32601)"
# Mcp-Name routes resources/read and prompts/get too; Base64 sentinel values are decoded
m26 resources/read '"uri":"world://log/1"'
is "$STATUS $(jget error.code <<<"$(sse_json)")" "400 -32020" "resources/read without Mcp-Name: 400, -32020"
m26 resources/read '"uri":"world://log/1"' -H "Mcp-Name: =?base64?$(printf 'world://log/1' | base64)?="
is "$STATUS $(jget result.contents.0.uri <<<"$(sse_json)")" "200 world://log/1" "... with Mcp-Name Base64-encoded (=?base64?...?=): read"
m26 resources/read '"uri":"world://log/1"' -H "Mcp-Name: =?base64?d29ybGQ6Ly9sb2cvMQ?="
is "$STATUS $(jget error.code <<<"$(sse_json)")" "400 -32020" "... Base64 with bad padding: 400, -32020"
m26 tools/call '"name":"tools_decho","arguments":{"x":1}' -H 'Mcp-Name:   tools_decho   '
is "$STATUS $(jget result.isError <<<"$(sse_json)")" "200 false" "Mcp-Name with whitespace around it is trimmed (RFC 9110)"
is "$(entries)" "$((b + 1))" "none of the refused requests committed anything (the one accepted tools/call did)"
# the 2025 revisions, same endpoint, same daemon
mcp "$CRED" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}'
is "$(jget result.protocolVersion <<<"$(sse_json)")" "2025-11-25" "initialize (2025-11-25) still answers on the same endpoint"
mcp "$CRED" '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' -H 'MCP-Protocol-Version: 2025-06-18'
is "$(jget result.resultType <<<"$(sse_json)")" "null" "a 2025-06-18 tools/list has no resultType (the 2025 shape)"
like "$(sse_json)" '"tools_decho"' "... and lists the tools"

# resources are the session's own episode's: ep-b (CRED_GRANT) sees nothing of ep-a's entry 1
rr() { mcp "$CRED_GRANT" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":\"$1\"}}"; jget error.message <<<"$(sse_json)"; }
is "$(rr world://log/1)" "resource not found: world://log/1 (log entry 1: not found)" "another episode's entry over resources/read: not found"
is "$(rr world://log/99999)" "resource not found: world://log/99999 (log entry 99999: not found)" "... exactly as an absent one"
is "$(rr world://why/1)" "resource not found: world://why/1 (log entry 1: not found)" "... its provenance walk too"
mcp "$CRED_GRANT" '{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{}}'
is "$(jget result.resources <<<"$(sse_json)")" "[]" "resources/list of an episode with no calls is empty"
mcp "$CRED" '{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///etc/passwd"}}'
is "$(jget error.code <<<"$(sse_json)")" "-32002" "a URI nothing serves (file://, no package publishes it): resource not found, -32002 under 2025"
m26 resources/list ''
is "$(jget result.resultType <<<"$(sse_json)") $(jget result.resources.0.uri <<<"$(sse_json)")" "complete world://log/1" "resources/list under 2026-07-28: stamped, the episode's entry"

# resources not found: -32602 under 2026-07-28 (SEP-2164), -32002 under 2025-11-25 (control); data.uri either way
m26 resources/read '"uri":"world://log/99999"' -H 'Mcp-Name: world://log/99999'
is "$STATUS $(jget error.code <<<"$(sse_json)") $(jget error.data.uri <<<"$(sse_json)")" "200 -32602 world://log/99999" \
  "an absent resource under 2026-07-28: -32602 with data.uri"
m26 resources/read '"uri":"test://nonexistent"' -H 'Mcp-Name: test://nonexistent'
is "$(jget error.code <<<"$(sse_json)") $(jget error.data.uri <<<"$(sse_json)")" "-32602 test://nonexistent" "... a URI of another scheme too"
mcp "$CRED" '{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"world://log/99999"}}' -H 'MCP-Protocol-Version: 2025-11-25'
is "$(jget error.code <<<"$(sse_json)") $(jget error.data.uri <<<"$(sse_json)")" "-32002 world://log/99999" "control: under 2025-11-25 the 2025 code, -32002"
# prompts: none are published
m26 prompts/list ''
J=$(sse_json)
is "$(jget result.prompts <<<"$J") $(jget result.ttlMs <<<"$J") $(jget result.cacheScope <<<"$J")" "[] 0 private" "prompts/list: an empty list with its cache fields"
m26 prompts/get '"name":"p"' -H 'Mcp-Name: p'
is "$(jget error.code <<<"$(sse_json)")" "-32602" "prompts/get of any name: -32602 unknown prompt"

# ---- subscriptions/listen: the acknowledgment, the subscription id, the filter ----
wait_for() { for _ in $(seq 1 600); do "$@" && return 0; sleep 0.1; done; return 1; }
logged() { grep -c -- "$1" "$T/err"; }
log_has() { [ "$(logged "$1")" -ge "$2" ]; }
LPIDS=()
trap 'for p in "${LPIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; daemon_kill; rm -rf "$T"' EXIT
listen() { # NAME ID FILTER [CREDENTIAL]: a curl holding a listen stream, its bytes in $T/NAME
  curl -sS -N -m 120 "$URL/mcp/" -H "$(auth "${4:-$CRED}")" "${MCP_HDRS[@]}" -H 'MCP-Protocol-Version: 2026-07-28' \
    -H 'Mcp-Method: subscriptions/listen' -D "$T/$1.h" \
    --data-binary "{\"jsonrpc\":\"2.0\",\"id\":$2,\"method\":\"subscriptions/listen\",\"params\":{\"notifications\":$3,$ENV}}" \
    > "$T/$1" 2>/dev/null &
  LPIDS+=($!); eval "LP_$1=$!"
}
data() { sed -n 's/^data: //p' "$T/$1" | sed -n "${2}p"; }
opened=$(logged "opened: POST /mcp/ subscriptions/listen")
listen l1 41 '{"toolsListChanged":true,"promptsListChanged":true}'
listen l2 42 '{"promptsListChanged":true}'
wait_for log_has "opened: POST /mcp/ subscriptions/listen" $((opened + 2)) && wait_for grep -q acknowledged "$T/l1" && wait_for grep -q acknowledged "$T/l2"
ok $? "two subscriptions/listen streams open"
like "$(cat "$T/l1.h")" "text/event-stream" "... each a text/event-stream response"
J=$(data l1 1)
is "$(jget method <<<"$J")" "notifications/subscriptions/acknowledged" "the first message is notifications/subscriptions/acknowledged"
like "$J" '"_meta":\{"io.modelcontextprotocol/subscriptionId":41\}' "... carrying the subscription id (the request's id, 41)"
like "$J" '"notifications":\{"toolsListChanged":true,"promptsListChanged":true\}' "... and the filter it honours: tools and prompts (packages publish prompts: prompts.sh)"
like "$(data l2 1)" '"notifications":\{"promptsListChanged":true\}' "a prompts-only listen is acknowledged with its filter"
filtered=$(logged "its subscription's filter does not ask for them")
"$FIXTURE" publish "$DB" "$AILANG_LITE" tests.fresh "$top_srcdir/tests/interp/conformance/echo.ail" || bail "fixture publish fresh"
wait_for grep -q 'tools/list_changed' "$T/l1"; ok $? "a transition published (another process): the tools listen gets notifications/tools/list_changed"
like "$(grep tools/list_changed "$T/l1")" '"io.modelcontextprotocol/subscriptionId":41' "... carrying its subscription id"
wait_for log_has "its subscription's filter does not ask for them" $((filtered + 1))
ok $? "the prompts-only listen was looked at for the same change"
unlike "$(cat "$T/l2")" 'tools/list_changed' "control: ... and got nothing (its filter does not ask for tools)"
mcp "$CRED" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subscriptions/listen\",\"params\":{\"notifications\":{}}}" -H 'MCP-Protocol-Version: 2025-11-25'
is "$STATUS $(jget error.code <<<"$(sse_json)")" "200 -32601" "subscriptions/listen under 2025-11-25: -32601 (GET /mcp/ is that revision's stream)"
# the caps hold for listens as for GET streams (4 per session): l1, l2 and two more, then a 5th refused
listen l3 43 '{"toolsListChanged":true}'
listen l4 44 '{"toolsListChanged":true}'
wait_for grep -q acknowledged "$T/l3" && wait_for grep -q acknowledged "$T/l4"; ok $? "two more listens of the same session open (4 in all)"
m26 subscriptions/listen '"notifications":{"toolsListChanged":true}'
is "$STATUS $(jget error.code <<<"$BODY") $(jget id <<<"$BODY")" "503 -32603 1" "a 5th listen of the session: 503, a JSON-RPC error with its id"
like "$(jget error.message <<<"$BODY")" "Capacity: this session holds the most notification streams it may" "... naming the per-session cap"
gone=$(logged "closed: its client closed the connection")
kill "$LP_l3" "$LP_l4"
wait_for log_has "closed: its client closed the connection" $((gone + 2)); ok $? "... both released when their clients leave"
gone=$(logged "closed: its client closed the connection")
kill "$LP_l2"
wait_for log_has "closed: its client closed the connection" $((gone + 1)); ok $? "a listen whose client leaves is released at once"
# resources list changes: a session's resources are its episode's log entries
listen l5 45 '{"resourcesListChanged":true}'
listen l6 46 '{"resourcesListChanged":true}' "$CRED_GRANT"
wait_for grep -q acknowledged "$T/l5" && wait_for grep -q acknowledged "$T/l6"; ok $? "two resources listens open (ep-a's and ep-b's)"
like "$(data l5 1)" '"notifications":\{"resourcesListChanged":true\}' "... acknowledged with resourcesListChanged"
moved=$(logged "unchanged: the log moved, its episode's resources did not")
m26 tools/call '"name":"tools_decho","arguments":{"r":1}' -H 'Mcp-Name: tools_decho'
is "$(jget result.isError <<<"$(sse_json)")" false "a call of ep-a commits"
wait_for grep -q 'resources/list_changed' "$T/l5"; ok $? "... ep-a's listen gets notifications/resources/list_changed"
like "$(grep resources/list_changed "$T/l5")" '"io.modelcontextprotocol/subscriptionId":45' "... with its subscription id"
wait_for log_has "unchanged: the log moved, its episode's resources did not" $((moved + 1)); ok $? "ep-b's listen was looked at for the same commit"
unlike "$(cat "$T/l6")" 'resources/list_changed' "control: ... and got nothing (its episode's entries did not change)"

NPM="$top_srcdir/build/npm/node_modules"
[ -d "$NPM/@modelcontextprotocol/client" ] || "$top_srcdir/scripts/install-test-deps.sh" >/dev/null 2>&1
if command -v node >/dev/null && [ -d "$NPM/@modelcontextprotocol/client" ]; then
  mkdir -p "$T/node" && ln -s "$NPM" "$T/node/node_modules" && cp "$top_srcdir/tests/daemon/sdk-v2.mjs" "$T/node/"
  SDK_V2_TOOL=tests_dviasdk SDK_V2_PUBLISH=$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1:]))' \
    "$FIXTURE" publish "$DB" "$AILANG_LITE" tests.viasdk "$top_srcdir/tests/interp/conformance/echo.ail") \
    timeout 120 node "$T/node/sdk-v2.mjs" "$URL" "$CRED" > "$T/v2.tap" 2>&1; rc=$?
  tap_relay "$T/v2.tap"
  is "$rc" 0 "the v2 SDK client script exits 0"
else
  skip "node or @modelcontextprotocol/client missing (scripts/install-test-deps.sh)" "MCP SDK v2 client"
fi
daemon_stop
is "$DRC" 0 "daemon stops cleanly"
wait "$LP_l1"; is "$?" 0 "the open listen ended with the stop (its curl got the end of the response)"
J=$(sed -n 's/^data: //p' "$T/l1" | tail -1)
is "$(jget id <<<"$J") $(jget result.resultType <<<"$J")" "41 complete" "... its last message the listen request's response (a graceful end)"
like "$J" '"io.modelcontextprotocol/subscriptionId":41' "... carrying the subscription id"
done_testing
