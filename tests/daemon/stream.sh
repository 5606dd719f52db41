#!/bin/bash
# GET /mcp/, the notification stream (daemon/stream.c; docs/daemon.md, "The
# notification stream"): two official MCP SDK clients (tests/daemon/
# sdk-notify.mjs) hold the stream the SDK opens after initialize; another
# process publishes with world-publish (attended, through a pty): the
# client whose session sees the new tool gets notifications/tools/list_changed
# and its next tools/list has it; the client whose session cannot see it
# gets nothing (control), nor does anyone when only the sessions changed
# (control); a tool both see notifies both. Then the stream's limits with
# curl: refusals (401, 406, 405 under 2026-07-28), the per-session cap,
# a revoked session's stream ended, and every stream ended at shutdown.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
command -v curl >/dev/null || { skip "curl not installed" "stream tests"; done_testing; exit; }
NPM="$top_srcdir/build/npm/node_modules"
PTY="$top_srcdir/tests/publish/pty.py"
daemon_setup
CURLS=()
trap 'for p in "${CURLS[@]}" ${NODEPID:-}; do kill -KILL "$p" 2>/dev/null; done; daemon_kill; rm -rf "$T"' EXIT
daemon_start || bail "daemon did not start"
# wait_for TEST-COMMAND...: true once it holds, false after 60 s (a hang guard, not a timing claim)
wait_for() { for _ in $(seq 1 600); do "$@" && return 0; sleep 0.1; done; return 1; }
logged() { grep -c -- "$1" "$T/err"; }
log_has() { [ "$(logged "$1")" -ge "$2" ]; }
# publish ID ACCESS_JSON: world-publish transitions from another process, attended through a pty
publish() {
  printf '[{"id":"%s","title":"%s","transitionFnFile":"%s","access":%s}]\n' "$1" "$1" \
    "$top_srcdir/tests/interp/conformance/echo.ail" "$2" > "$T/m-$1.json"
  (env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '> ' --answer "publish 1 transitions to $DB" \
    --out "$T/pub.out" --err "$T/pub.err" --tty "$T/pub.tty" -- \
    "$top_builddir/cli/world-publish" transitions --store "$DB" --manifest "$T/m-$1.json" --ailang-bin "$AILANG_LITE")
}

# ---- the SDK clients ----
if ! command -v node >/dev/null || [ ! -d "$NPM/@modelcontextprotocol/sdk" ]; then
  skip "node or the MCP SDK package is missing (scripts/install-test-deps.sh)" "SDK notification clients"
else
  mkdir -p "$T/node" "$T/n" && ln -s "$NPM" "$T/node/node_modules" && cp "$top_srcdir/tests/daemon/sdk-notify.mjs" "$T/node/"
  # A = $CRED_GRANT (Secret.Read=vault: sees tests.hidden), B = $CRED (no grants: does not)
  timeout 300 node "$T/node/sdk-notify.mjs" "$URL" "$CRED_GRANT" "$CRED" "$T/n" > "$T/node.out" 2>&1 &
  NODEPID=$!
  wait_for test -e "$T/n/ready"; ok $? "both SDK clients connected ($(cat "$T/node.out"))"
  like "$(cat "$T/n/A.caps")" '"tools":\{"listChanged":true\}' "initialize advertises tools.listChanged: true"
  wait_for log_has "stream episode=ep-b opened" 1 && wait_for log_has "stream episode=ep-a opened" 1
  ok $? "each SDK client opened its GET /mcp/ stream by itself after initialize"
  unlike "$(cat "$T/n/A.tools")" "tests_dhidden" "control: tests.hidden is not listed before it is published"

  # control: only the sessions change (a session minted by another process)
  before=$(logged "unchanged: the store changed")
  "$FIXTURE" session "$DB" "$(printf '7%.0s' $(seq 64))" ep-z '[]' +3600 || bail "fixture session"
  wait_for log_has "unchanged: the store changed" $((before + 2)); ok $? "a session minted: both streams are looked at again"
  ok "$(ls "$T/n" | grep -c '^[AB]\.[0-9]')" "... and neither client got a notification (their tools did not change)"

  # a tool only A sees
  before_b=$(logged "stream episode=ep-a unchanged")
  publish tests.hidden '{"effect":"Secret.Read","scope":"vault","cost":1}'
  is "$?" 0 "world-publish publishes tests.hidden (attended) while the daemon serves ($(tail -1 "$T/pub.out"))"
  wait_for test -e "$T/n/A.1"; ok $? "client A (its session sees tests.hidden) receives notifications/tools/list_changed"
  like "$(cat "$T/n/A.1" 2>/dev/null)" "tests_dhidden" "... and its next tools/list has tests_dhidden"
  wait_for log_has "stream episode=ep-a unchanged" $((before_b + 1))
  ok $? "control: the same pass looked at B's stream (ep-a) and found its tools unchanged"
  is "$(logged "stream episode=ep-a notified")" 0 "... so nothing was sent to B"
  ok "$([ ! -e "$T/n/B.1" ]; echo $?)" "... and client B (its session cannot see tests.hidden) got no notification"

  # a tool both see
  publish tests.open null
  wait_for test -e "$T/n/B.1"; ok $? "a tool every session sees: client B receives the notification"
  wait_for test -e "$T/n/A.2"; ok $? "... and client A its second one"
  like "$(cat "$T/n/B.1" 2>/dev/null)" "tests_dopen" "B's next tools/list has tests_dopen"
  unlike "$(cat "$T/n/B.1" 2>/dev/null)" "tests_dhidden" "... and still not tests_dhidden"
  is "$(logged "stream episode=ep-a notified")" 1 "B's stream was notified once in all"
  ok "$(ls "$T/n" | grep -c 'error')" "no client saw a transport or handler error ($(cat "$T/n/"*error* 2>/dev/null | head -c 300))"
  touch "$T/n/done"
  wait "$NODEPID"; is "$?" 0 "the SDK script ends cleanly"
  NODEPID=""
fi

# ---- a stream whose client has gone is released at once (issue 41 item 6) ----
# The SDK client opens a GET stream after each initialize; before, a client
# that connected and closed a few times with one credential met 503
# Capacity on its 5th stream, its closed ones still counted until the next
# 15 s keep-alive found them gone.
if ! command -v node >/dev/null || [ ! -d "$NPM/@modelcontextprotocol/sdk" ]; then
  skip "node or the MCP SDK package is missing (scripts/install-test-deps.sh)" "SDK reconnecting client"
else
  mkdir -p "$T/node" && ln -sfn "$NPM" "$T/node/node_modules" && cp "$top_srcdir/tests/daemon/sdk-reconnect.mjs" "$T/node/"
  CRED_R=$(printf '9%.0s' $(seq 64))
  "$FIXTURE" session "$DB" "$CRED_R" ep-r '[]' +3600 || bail "fixture session"
  timeout 300 node "$T/node/sdk-reconnect.mjs" "$URL" "$CRED_R" cycle 10 > "$T/rc.out" 2>&1
  is "$?" 0 "the v1 SDK client connects and closes 10 times in a row with one credential"
  is "$(sed -n 's/^statuses: //p' "$T/rc.out")" "200 200 200 200 200 200 200 200 200 200" \
    "... each of its 10 GET streams was opened (200): none refused"
  # (each client's own close aborts its stream: the SDK reports that AbortError, nothing else)
  is "$(grep '^error:' "$T/rc.out" | grep -vc 'AbortError: This operation was aborted')" 0 \
    "... and the SDK reported no other error ($(grep '^error:' "$T/rc.out" | grep -v AbortError | head -2))"
  wait_for log_has "stream episode=ep-r closed: its client closed the connection" 10; ok $? "... each stream released when its client left (logged: closed, its client closed the connection)"
  is "$(logged "stream episode=ep-r closed: its session")" 0 "... not for its session (control: the session lives)"
  # control: the cap still holds while the streams are open
  timeout 300 node "$T/node/sdk-reconnect.mjs" "$URL" "$CRED_R" hold 5 > "$T/hold.out" 2>&1
  is "$(sed -n 's/^statuses: //p' "$T/hold.out")" "200 200 200 200 503" \
    "control: 5 SDK clients held open with one credential: the 5th stream is refused (503, 4 per session)"
  wait_for log_has "stream episode=ep-r closed: its client closed the connection" 14; ok $? "... the 4 held streams released when those clients closed"
fi

# ---- the stream's refusals and limits, with curl ----
http GET /mcp/ -H 'Accept: text/event-stream'
is "$STATUS" 401 "GET /mcp/ without a credential: 401"
http GET /mcp/ -H "$(auth "$CRED")"
is "$STATUS" 406 "GET /mcp/ without Accept: text/event-stream: 406"
http GET /mcp/ -H "$(auth "$CRED")" -H 'Accept: text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28'
is "$STATUS" 405 "GET /mcp/ under 2026-07-28 (stateless): 405, no stream"
# stream N CRED: a curl holding a stream, its output in $T/s.N
stream() {
  curl -sS -N -m 120 "$URL/mcp/" -H "$(auth "$2")" -H 'Accept: text/event-stream' -H 'MCP-Protocol-Version: 2025-11-25' \
    -D "$T/s.$1.h" > "$T/s.$1" 2>/dev/null &
  CURLS+=($!); eval "SPID$1=$!"
}
CRED_S=$(printf '8%.0s' $(seq 64))
"$FIXTURE" session "$DB" "$CRED_S" ep-s '[]' +3600 || bail "fixture session"
opened=$(logged "stream episode=ep-s opened")
for i in 1 2 3 4; do stream "$i" "$CRED_S"; done
wait_for log_has "stream episode=ep-s opened" $((opened + 4)); ok $? "one session opens 4 streams (the per-session cap)"
like "$(cat "$T/s.1.h")" "text/event-stream" "... each a text/event-stream response"
like "$(cat "$T/s.1")" ": stream open" "... that starts with an SSE comment"
http GET /mcp/ -H "$(auth "$CRED_S")" -H 'Accept: text/event-stream'
is "$STATUS/$(jget error.class <<<"$BODY")" "503/Capacity" "a 5th stream of the same session: 503 Capacity"
like "$(jget error.message <<<"$BODY")" "per session" "... naming the per-session cap"
stream 5 "$CRED"
wait_for log_has "stream episode=ep-a opened" 1 && wait_for grep -q ": stream open" "$T/s.5"
ok $? "control: another session still opens one"
# a revoked session's streams end
run_capture out err rc "$WORLDD" session revoke --store "$DB" --episode ep-s
is "$rc" 0 "ep-s revoked while its streams are open ($err)"
rcs=""; for i in 1 2 3 4; do eval "p=\$SPID$i"; wait "$p"; rcs="$rcs$?"; done
is "$rcs" 0000 "... every one of its 4 streams ended: each curl got the end of its response (exit 0, not its 120 s limit)"
is "$(logged "stream episode=ep-s closed: its session was revoked")" 4 "... each logged as ended for its revoked session"
# shutdown ends the remaining stream and the daemon exits
daemon_stop
is "$DRC" 0 "the daemon stops cleanly with a stream open"
wait "$SPID5"; is "$?" 0 "... and that stream ended: its curl got the end of the response (exit 0)"
like "$(cat "$T/err")" "stream episode=ep-a closed: the daemon is stopping" "... logged as ended by the stop"
done_testing
