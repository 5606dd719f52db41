#!/bin/bash
# U+0000 ("\u0000") in a request (issue 39): valid JSON, and canonical JSON
# keeps it (docs/store.md), so it is accepted where the contract carries data
# -- a tool's arguments over MCP, a message's parts over A2A -- and reaches
# the transition whole (tools.echo answers it back, not cut at the NUL).
# Anywhere World reads a string as a name (the method, a tool name, ids) it
# is refused in the project's words (-32600 naming the place), never as a
# parse error naming a library flag; the control is the same request
# without the NUL, which runs. See docs/daemon.md, "JSON-RPC".
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
command -v curl >/dev/null || { skip "curl not installed" "daemon tests"; done_testing; exit; }
daemon_setup
daemon_start || bail "daemon did not start"
a2a() { local c=$1 j=$2; shift 2; http POST /a2a/ -H "$(auth "$c")" -H 'Content-Type: application/json' --data-binary "$j" "$@"; }
# The echoed text, as Python sees it (repr: a NUL shows as \x00).
echoed() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(repr(eval(sys.argv[1], {"d": d})))' "$1"; }

# ---- MCP ----
mcp "$CRED" '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tools_decho","arguments":{"text":"a\u0000b"}}}'
J=$(sse_json)
is "$STATUS/$(jget result.isError <<<"$J")" "200/false" "MCP: a tool argument holding U+0000 is accepted and runs ($(head -c 200 <<<"$J"))"
is "$(echoed 'd["result"]["structuredContent"]["echo"]["text"]' <<<"$J")" "'a\\x00b'" \
  "... and the transition got it whole: the echo is a, NUL, b"
like "$(jget result.content.0.text <<<"$J")" 'a\\u0000b' "... the text content shows it escaped"
mcp "$CRED" '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tools_decho","arguments":{"k\u0000":1}}}'
J=$(sse_json)
is "$STATUS/$(jget error.code <<<"$J")" "400/-32700" "MCP: U+0000 in an object key: a parse error (no key may hold one)"
unlike "$(jget error.message <<<"$J")" "JSON_ALLOW_NUL" "... naming no library flag ($(jget error.message <<<"$J"))"

mcp "$CRED" '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"tools_decho\u0000x","arguments":{}}}'
J=$(sse_json)
is "$STATUS/$(jget error.code <<<"$J")/$(jget id <<<"$J")" "400/-32600/3" "MCP: U+0000 in the tool name: 400, -32600, its id"
is "$(jget error.message <<<"$J")" "invalid request: the string at /params/name holds U+0000 (a NUL character); World takes one only as data, inside a tool's arguments (params.arguments)" \
  "... the reason in the project's words, naming the place"
mcp "$CRED" '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"tools_decho","arguments":{}}}'
is "$(jget result.isError <<<"$(sse_json)")" false "control: the same call without the NUL runs"
mcp "$CRED" '{"jsonrpc":"2.0","id":4,"method":"ping\u0000"}'
J=$(sse_json)
is "$(jget error.code <<<"$J")" -32600 "MCP: U+0000 in the method: -32600"
like "$(jget error.message <<<"$J")" "at /method holds U\\+0000" "... naming /method"
mcp "$CRED" '{"jsonrpc":"2.0","id":"a\u0000","method":"ping"}'
J=$(sse_json)
is "$(jget error.code <<<"$J")/$(jget id <<<"$J")" "-32600/null" "MCP: U+0000 in the id: -32600, id null (it cannot be echoed)"
mcp "$CRED" '[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"x\u0000"}}]' \
  -H 'MCP-Protocol-Version: 2025-03-26'
like "$(jget error.message <<<"$(sse_json)")" "at /1/params/name holds" "MCP batch: the place names the message in the batch"

# a key that only starts like a data place is none (segments compare whole)
long=$(printf 'A%.0s' $(seq 600))
mcp "$CRED" '{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"tools_decho","arguments":{},"arguments'"$long"'":"x\u0000"}}'
is "$(jget error.code <<<"$(sse_json)")" -32600 "MCP: U+0000 under a key that only starts like params.arguments: refused"

# ---- A2A ----
SEND='{"jsonrpc":"2.0","id":7,"method":"tasks/send","params":{"id":"task-nul-1","message":{"role":"user","parts":[{"type":"data","data":{"text":"a\u0000b"}}]},"metadata":{"skill_id":"tools.echo"}}}'
a2a "$CRED" "$SEND"
is "$STATUS/$(jget result.status.state <<<"$BODY")" "200/completed" "A2A: a data part holding U+0000 is accepted and the task completes"
is "$(echoed 'd["result"]["artifacts"][0]["parts"][0]["data"]["echo"]["text"]' <<<"$BODY" 2>&1)" "'a\\x00b'" \
  "... and the transition got it whole"
TEXT='{"jsonrpc":"2.0","id":8,"method":"tasks/send","params":{"id":"task-nul-2","message":{"role":"user","parts":[{"type":"text","text":"{\"text\":\"c\\u0000d\"}"}]},"metadata":{"skill_id":"tools.echo"}}}'
a2a "$CRED" "$TEXT"
is "$(echoed 'd["result"]["artifacts"][0]["parts"][0]["data"]["echo"]["text"]' <<<"$BODY" 2>&1)" "'c\\x00d'" \
  "A2A: a text part whose JSON holds \\u0000: read by its length, echoed whole"
a2a "$CRED" '{"jsonrpc":"2.0","id":9,"method":"tasks/send","params":{"id":"task-nul\u0000","message":{"role":"user","parts":[{"type":"data","data":{}}]},"metadata":{"skill_id":"tools.echo"}}}'
is "$(jget error.code <<<"$BODY")/$(jget id <<<"$BODY")" "-32600/9" "A2A: U+0000 in the task id: -32600, its id"
like "$(jget error.message <<<"$BODY")" "the string at /params/id holds U\\+0000 \\(a NUL character\\); World takes one only as data" \
  "... naming the place, in the project's words"
a2a "$CRED" '{"jsonrpc":"2.0","id":10,"method":"tasks/send","params":{"id":"task-nul-3","message":{"role":"user","parts":[{"type":"data","data":{}}]},"metadata":{"skill_id":"tools.echo\u0000"}}}'
like "$(jget error.message <<<"$BODY")" "at /params/metadata/skill_id holds U\\+0000" "A2A: U+0000 in the skill id: refused, named"
a2a "$CRED" '{"jsonrpc":"2.0","id":10,"method":"tasks/send","params":{"id":"task-nul-3","message":{"role":"user","parts":[{"type":"data","data":{}}]},"metadata":{"skill_id":"tools.echo"}}}'
is "$(jget result.status.state <<<"$BODY")" completed "control: the same task without the NUL completes"
daemon_stop
is "$DRC" 0 "the daemon stops cleanly"
done_testing
