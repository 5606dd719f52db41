#!/bin/bash
# tests/daemon/pg_rtt.sh: how many round trips to PostgreSQL a call makes
# (issue 44 item 1), counted by the driver (store/db_pg.c, the test hook
# WORLD_TEST_PG_TRACE: one line per wait for the server's answer), on a
# throwaway cluster. Counts, not times: they are deterministic.
#   - a pure call (tools_decho) after its warm-up: at most PURE_MAX (6);
#   - an effectful read (tests.read, Workspace.Read at cost 1) and write
#     (tests.write, se-tools' ailang-write, Workspace.Write): at most
#     EFF_MAX (14) each: two transactions, the effect's intent and its
#     outcome;
#   the log's tree reads 0 to 2 hashes an append (store/tree.c), with the
#   entry's index, when another writer appended since this daemon's last
#   append (else it has them): the bounds leave that room (seen: pure 5,
#   read 12, write 13). A request looks at the store's changes once (its session
#   open; the look also reads the episode's usage for the quota), a
#   transaction once more (with BEGIN and the write queue's lock; the look
#   also reads the log's tip); what is left: the invocation intent's id
#   (RETURNING), the record read back for the log's check, the COMMIT
#   (the usage's write, its overflow check a NOT NULL, goes with it); an effectful call adds
#   its episode's home, the look before its effect runs, the task id's
#   lookup, the budget, its two intents' ids and their outcomes' read;
#   - the control: the same daemon with the driver's batching off
#     (WORLD_TEST_PG_NO_PIPELINE=1) makes more round trips for the same
#     calls, so the count measures what the batching saves.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/pg_cluster.sh"
. "$top_srcdir/tests/daemon/lib.sh"
if ! grep -q -- '-DWORLD_TEST_HOOKS=1' "$top_builddir/Makefile"; then
  skip "built without --enable-test-hooks (the round-trip trace is a test hook)" "round trips"
  done_testing; exit 0
fi
daemon_setup
trap 'daemon_kill; pg_cluster_cleanup; rm -rf "$T"' EXIT
chmod 755 "$T"
pg_cluster_or_skip "round trips to PostgreSQL"
FIXTURE_EFFECTFUL='{"cost":1,"effect":"Workspace.Read","scope":"worktree"}' \
  "$FIXTURE" publish "$DB" "$AILANG_LITE" tests.read "$top_srcdir/packages/se-tools/examples/effect-plan-read.ail" \
  '{"cost":0,"effect":"Workspace.Read","scope":"worktree"}' || bail "fixture publish tests.read"
# tests.write: packages/se-tools' ailang-write (one Workspace.Write)
FIXTURE_EFFECTFUL='{"cost":1,"effect":"Workspace.Write","scope":"worktree"}' \
  "$FIXTURE" publish "$DB" "$AILANG_LITE" tests.write "$top_srcdir/packages/se-tools/ailang-write.ail" \
  '{"cost":0,"effect":"Workspace.Write","scope":"worktree"}' || bail "fixture publish tests.write"
CRED_RD=$(printf '7%.0s' $(seq 64))
"$FIXTURE" session "$DB" "$CRED_RD" ep-h '[{"budget":1000,"effect":"Workspace.Read","scope":"worktree"},{"budget":1000,"effect":"Workspace.Write","scope":"worktree"}]' +3600 || bail "fixture session"
"$WORLDD" store copy "$DB" "$PG_URI" > "$T/copy.out" 2> "$T/copy.err" || bail "store copy: $(cat "$T/copy.err")"
XDG_CACHE_HOME=$T/cache; export XDG_CACHE_HOME
DB=$PG_URI
mkdir -p "$T/ws/ep-h" && chmod 700 "$T/ws" "$T/ws/ep-h" && echo hello > "$T/ws/ep-h/README.md"
TR=$T/trace

call() { # CRED ID NAME ARGS: one tools/call over MCP
  mcp "$1" "{\"jsonrpc\":\"2.0\",\"id\":$2,\"method\":\"tools/call\",\"params\":{\"name\":\"$3\",\"arguments\":$4}}"
}
# round trips of one call: the trace lines it added
rtt() { # CRED ID NAME ARGS
  local a b
  a=$(wc -l < "$TR")
  call "$@"
  b=$(wc -l < "$TR")
  [ "$STATUS" = 200 ] || diag "call $3: HTTP $STATUS $(sse_json | head -c 300)"
  [ "$(sse_json | jget result.isError)" = false ] || diag "call $3: $(sse_json | head -c 300)"
  RT=$((b - a))
  sed -n "$((a + 1)),${b}p" "$TR" > "$T/last.$3"
}
measure() { # MODE: prints "pure effectful"
  : > "$TR"
  WORLD_TEST_PG_TRACE=$TR daemon_start --workspace-root "$T/ws" || bail "worldd serve on the cluster did not start"
  for i in 1 2 3; do # warm-up: the connection's statements, the caches
    rtt "$CRED" 1$i tools_decho "{\"n\":$i}"
    rtt "$CRED_RD" 2$i tests_dread '{"path":"README.md"}'
    rtt "$CRED_RD" 4$i tests_dwrite "{\"path\":\"out.txt\",\"content\":\"warm $i\"}"
  done
  rtt "$CRED" 31 tools_decho '{"n":31}'; P=$RT; cp "$T/last.tools_decho" "$T/pure.$1"
  rtt "$CRED_RD" 32 tests_dread '{"path":"README.md"}'; E=$RT; cp "$T/last.tests_dread" "$T/eff.$1"
  rtt "$CRED_RD" 33 tests_dwrite '{"path":"out.txt","content":"measured"}'; W=$RT; cp "$T/last.tests_dwrite" "$T/write.$1"
  daemon_stop
}
measure on
PON=$P EON=$E WON=$W
diag "pure call: $PON round trips; effectful calls: read $EON, write $WON"
for k in pure eff write; do
  while IFS= read -r l; do diag "  $k: $l"; done < "$T/$k.on"
done
PURE_MAX=6 EFF_MAX=14
ok "$([ "$PON" -ge 1 ] && [ "$PON" -le $PURE_MAX ]; echo $?)" "a pure call (tools_decho): $PON round trips (at most $PURE_MAX)"
ok "$([ "$EON" -ge 1 ] && [ "$EON" -le $EFF_MAX ]; echo $?)" "an effectful read (tests.read, Workspace.Read): $EON round trips (at most $EFF_MAX)"
ok "$([ "$WON" -ge 1 ] && [ "$WON" -le $EFF_MAX ]; echo $?)" "an effectful write (tests.write, Workspace.Write): $WON round trips (at most $EFF_MAX)"
WORLD_TEST_PG_NO_PIPELINE=1 measure off
diag "batching off: pure $P, effectful read $E, write $W"
ok "$([ "$P" -gt "$PON" ] && [ "$E" -gt "$EON" ] && [ "$W" -gt "$WON" ]; echo $?)" \
  "control: the driver's batching off, the same calls make more round trips (pure $P, read $E, write $W)"
done_testing
