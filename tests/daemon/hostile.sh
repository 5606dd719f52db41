#!/bin/bash
# worldd serve keeps serving while its calls hit a hostile interpreter
# (issue 23, item 3; docs/escape-suite.md): the store's interpreter is
# tests/supervisor/hostile-peer and WORLD_TEST_AGENT=hostile (a test hook,
# supervisor/supervisor.h) hands it the capsule's frame fds. After each
# hostile call (a cut frame, an over-cap length, a mid-frame stall) the call
# is an error naming the violation, nothing is committed, /v1/health
# answers, and a normal tools/call of another transition commits.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
command -v curl >/dev/null || { skip "curl not installed" "daemon hostile tests"; done_testing; exit; }
command -v python3 >/dev/null || { skip "python3 not installed" "daemon hostile tests"; done_testing; exit; }
if ! grep -q -- '-DWORLD_TEST_HOOKS=1' "$top_builddir/Makefile"; then
  skip "built without --enable-test-hooks (WORLD_TEST_AGENT is a test hook)" "daemon hostile tests"; done_testing; exit
fi
PEER="$top_builddir/tests/supervisor/hostile-peer"
T=$(mktemp -d "${TMPDIR:-/tmp}/world-hostile.XXXXXX")
trap 'daemon_kill; rm -rf "$T"' EXIT
DB="$T/db"
for s in ok cut-body over-cap stall-body; do
  printf '%s\n' "$s" > "$T/$s.ail"
  "$FIXTURE" publish "$DB" "$PEER" "hostile.${s//-/}" "$T/$s.ail" || bail "fixture publish $s"
done
"$FIXTURE" session "$DB" "$CRED" ep-a '[]' +3600 || bail "fixture session"
AILANG_LITE=$PEER WORLD_TEST_AGENT=hostile daemon_start || bail "daemon did not start: $(cat "$T/err")"

id=10
for s in cutbody:"capsule ended before sending its output" overcap:"over the 2162688-byte frame cap" stallbody:"deadline"; do
  name=${s%%:*} needle=${s#*:}
  id=$((id + 1))
  mcp "$CRED" "{\"jsonrpc\":\"2.0\",\"id\":$id,\"method\":\"tools/call\",\"params\":{\"name\":\"hostile_d$name\",\"arguments\":{}}}"
  printf '%s' "$BODY" | grep -q -- "$needle"
  ok $? "$name: the call answers an error naming the violation ($(printf '%s' "$BODY" | head -c 300))"
  is "$(sse_json | jget result.isError)" true "$name: a tool error (isError), the daemon answered"
  http GET /v1/health
  is "$STATUS" 200 "$name: /v1/health answers after it"
  id=$((id + 1))
  mcp "$CRED" "{\"jsonrpc\":\"2.0\",\"id\":$id,\"method\":\"tools/call\",\"params\":{\"name\":\"hostile_dok\",\"arguments\":{}}}"
  printf '%s' "$BODY" | grep -q 'served'
  ok $? "$name: then a normal tools/call of another transition commits ($(printf '%s' "$BODY" | head -c 200))"
done
http GET /v1/log -H "$(auth "$CRED")"
n=$(printf '%s' "$BODY" | python3 -c 'import json,sys; v=json.load(sys.stdin); print(len(v["items"]))' 2>/dev/null)
is "$n" 3 "the episode's log holds exactly the three normal calls"
kill -0 "$DPID" 2>/dev/null
ok $? "the daemon is still running"
daemon_stop
is "$DRC" 0 "it exits 0 on SIGTERM"
done_testing
