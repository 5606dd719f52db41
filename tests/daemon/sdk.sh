#!/bin/bash
# The official MCP TypeScript SDK client (Streamable HTTP: initialize, list,
# call, ping) and the A2A JS SDK client (agent card, sendMessage, the same
# message again, getTask), both unmodified, against worldd serve. The npm
# packages come from scripts/install-test-deps.sh (build/npm); without node
# or those packages the test skips.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
NPM="$top_srcdir/build/npm/node_modules"
if [ ! -d "$NPM/@modelcontextprotocol/sdk" ] || [ ! -d "$NPM/@a2a-js/sdk" ]; then
  "$top_srcdir/scripts/install-test-deps.sh" >/dev/null 2>&1
fi
if ! command -v node >/dev/null || [ ! -d "$NPM/@modelcontextprotocol/sdk" ] || [ ! -d "$NPM/@a2a-js/sdk" ]; then
  skip "node or the npm SDK packages are missing (scripts/install-test-deps.sh)" "SDK clients"
  done_testing; exit
fi
daemon_setup
# tests.shape returns its arguments: the caller chooses whether the result
# conforms to the outputSchema and whether it reports failure ("ok": false)
"$FIXTURE" publish "$DB" "$AILANG_LITE" tests.shape "$top_srcdir/tests/daemon/identity.ail" null \
  '{"type":"object","properties":{"ok":{"type":"boolean"},"n":{"type":"integer"}}}' || bail "fixture publish shape"
daemon_start || bail "daemon did not start"
# ES modules resolve packages next to the script, not through NODE_PATH
mkdir -p "$T/node" && ln -s "$NPM" "$T/node/node_modules" && cp "$top_srcdir/tests/daemon/sdk-clients.mjs" "$T/node/"
sdk() { # run the client script, its assertions renumbered into this plan
  timeout 120 node "$T/node/sdk-clients.mjs" "$@" > "$T/sdk.tap" 2>&1
  local rc=$?
  tap_relay "$T/sdk.tap"
  is "$rc" 0 "the SDK client script exits 0 (${3:-sdk} mode)"
}
sdk "$URL" "$CRED"
grep -q "tools/call" "$T/err"; ok $? "the daemon logged the SDK's tools/call"
grep -q "rpc=tools/call,error=OutputSchema" "$T/err"; ok $? "the request log records the outputSchema violation (rpc=tools/call,error=OutputSchema)"
grep -q "rpc=tools/call,result=failed" "$T/err"; ok $? "the request log records the result that reports failure (rpc=tools/call,result=failed)"
daemon_stop
is "$DRC" 0 "daemon stops cleanly after the SDK clients"

# The published packages (quickstart, se-tools), registered through the store
# API by tests/packages' fixture, with a workspace root: effectful calls.
PFIX="$top_builddir/tests/packages/packages-fixture"
if [ -x "$PFIX" ]; then
  P=$T/pkg; mkdir -p "$P/ws/ep1"
  grants=(Workspace.Read=worktree:100 Workspace.Write=worktree:100 Ailang.Check=worktree:100 Ailang.Run=worktree:100
          Ailang.Discover=worktree:100 Ailang.CLI=worktree:100)
  PCRED=$("$PFIX" "$P" "$top_srcdir" ep1 "$top_srcdir/packages/se-tools/transitions.json" "${grants[@]}") || bail "packages fixture"
  "$PFIX" "$P" "$top_srcdir" ep1 "$top_srcdir/packages/quickstart/transitions.json" "${grants[0]}" >/dev/null || bail "packages fixture"
  DB=$P/world.db
  daemon_start --workspace-root "$P/ws" --tool-ailang-bin "$AILANG_LITE" --examples-dir "$top_srcdir/packages/se-tools/examples" ||
    bail "daemon did not start on the packages store"
  sdk "$URL" "$PCRED" packages
  is "$(cat "$P/ws/ep1/src/hello.ail" 2>/dev/null | head -1)" "module hello" "the file ailang-write wrote is in the episode's worktree"
  daemon_stop
  is "$DRC" 0 "daemon on the packages store stops cleanly"
else
  skip "tests/packages/packages-fixture not built" "the published packages over MCP"
fi
done_testing
