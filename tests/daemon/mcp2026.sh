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
is "$(jget result.resultType <<<"$J") $(jget result.capabilities.tools.listChanged <<<"$J") $(jget result._meta.io.modelcontextprotocol/serverInfo.name <<<"$J")" \
  "complete false null" "... resultType complete, the tools capability"
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
mcp "$CRED" '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}' -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/list'
is "$STATUS $(jget error.code <<<"$(sse_json)")" "400 -32600" "a 2026-07-28 header without the _meta envelope: -32600"
like "$(jget error.message <<<"$(sse_json)")" 'needs the _meta envelope' "... saying what is missing"
mcp "$CRED" '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}' -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/list'
is "$(jget error.code <<<"$(sse_json)")" "-32602" "an envelope naming an unsupported revision: -32602"
mcp "$CRED" '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}' -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/list'
is "$(jget error.code <<<"$(sse_json)")" "-32602" "an envelope without the client's capabilities: -32602"
m26 initialize '"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"x","version":"1"}'
is "$(jget error.code <<<"$(sse_json)")" "-32601" "initialize under 2026-07-28: -32601 (stateless: server/discover)"
is "$(entries)" "$b" "none of the refused requests committed anything"
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
is "$(jget error.code <<<"$(sse_json)")" "-32602" "a URI outside world://: -32602"
m26 resources/list ''
is "$(jget result.resultType <<<"$(sse_json)") $(jget result.resources.0.uri <<<"$(sse_json)")" "complete world://log/1" "resources/list under 2026-07-28: stamped, the episode's entry"

NPM="$top_srcdir/build/npm/node_modules"
[ -d "$NPM/@modelcontextprotocol/client" ] || "$top_srcdir/scripts/install-test-deps.sh" >/dev/null 2>&1
if command -v node >/dev/null && [ -d "$NPM/@modelcontextprotocol/client" ]; then
  mkdir -p "$T/node" && ln -s "$NPM" "$T/node/node_modules" && cp "$top_srcdir/tests/daemon/sdk-v2.mjs" "$T/node/"
  timeout 120 node "$T/node/sdk-v2.mjs" "$URL" "$CRED" > "$T/v2.tap" 2>&1; rc=$?
  tap_relay "$T/v2.tap"
  is "$rc" 0 "the v2 SDK client script exits 0"
else
  skip "node or @modelcontextprotocol/client missing (scripts/install-test-deps.sh)" "MCP SDK v2 client"
fi
daemon_stop
is "$DRC" 0 "daemon stops cleanly"
done_testing
