#!/bin/bash
# tests/store/scan_start.sh: the daemon's own start-up line on the store of
# issue 39 (item 3): 150 effectful calls, three publishes of 300 sources of
# 40 KB, 4 calls (tests/store/test_scan_start --make). `worldd serve`
# starts on it and logs `worldd scan log_rows=154 world_rows=154 holes=0
# complete=1`: its start-up scan (20,000 rows, 2 s) covered the whole
# store, and printed no integrity_scan_incomplete line. Before, it covered
# 15 to 18 of the 154 entries. The control (each object verified once,
# against the per-entry re-verification of before, counted) is
# test_scan_start's; nothing here is timed.
. "$top_srcdir/tests/tap.sh"
mk="$top_builddir/tests/store/test_scan_start"
[ -x "$mk" ] || bail "$mk not built"
T=$(mktemp -d "${TMPDIR:-/tmp}/world-scan-start.XXXXXX")
DPID=""
trap '[ -n "$DPID" ] && kill -KILL "$DPID" 2>/dev/null; rm -rf "$T"' EXIT
"$mk" --make "$T" || bail "the issue's store could not be made"
"$WORLDD" serve --store "$T/world.db" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 >"$T/out" 2>"$T/err" &
DPID=$!
up=""
for _ in $(seq 1 300); do # at most 30 s
  up=$(sed -n 's/^worldd listening on //p' "$T/out")
  [ -n "$up" ] && break
  kill -0 "$DPID" 2>/dev/null || break
  sleep 0.1
done
[ -n "$up" ] || { diag "$(cat "$T/err")"; bail "worldd serve did not start"; }
line=$(grep -o 'worldd scan log_rows=.*' "$T/err")
is "$line" "worldd scan log_rows=154 world_rows=154 holes=0 complete=1" \
  "serve's start-up scan covers the issue's store within its budget (complete=1)"
unlike "$(cat "$T/out")" 'integrity_(scan_incomplete|hole)' "and prints no integrity_scan_incomplete (or hole) line"
kill -TERM "$DPID"
wait "$DPID"
ok $? "the daemon stops cleanly"
DPID=""
done_testing
