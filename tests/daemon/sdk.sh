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
daemon_start || bail "daemon did not start"
# ES modules resolve packages next to the script, not through NODE_PATH
mkdir -p "$T/node" && ln -s "$NPM" "$T/node/node_modules" && cp "$top_srcdir/tests/daemon/sdk-clients.mjs" "$T/node/"
timeout 120 node "$T/node/sdk-clients.mjs" "$URL" "$CRED" > "$T/sdk.tap" 2>&1
rc=$?
# renumber the client's assertions into this script's plan
while IFS= read -r line; do
  case "$line" in
    "ok "*) ok 0 "${line#ok * - }" ;;
    "not ok "*) ok 1 "${line#not ok * - }" ;;
    *) echo "$line" ;;
  esac
done < "$T/sdk.tap"
is "$rc" 0 "the SDK client script exits 0"
grep -q "tools/call" "$T/err"; ok $? "the daemon logged the SDK's tools/call"
daemon_stop
is "$DRC" 0 "daemon stops cleanly after the SDK clients"
done_testing
