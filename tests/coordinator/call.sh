#!/bin/bash
# tests/coordinator/call.sh: worldd call, session list/revoke and journal
# from the command line, against a store made by ctest-fixture (a pure
# transition t.seen registered through the store API, one session).
. "$top_srcdir/tests/tap.sh"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
FIX="$top_builddir/tests/coordinator/ctest-fixture"
cred=$("$FIX" "$T" ep1 'Test.Echo=s:1') || bail "fixture"
DB="$T/world.db"

run_capture out err rc "$WORLDD" call --store "$DB" --session "$cred" --task t1 t.seen --json '{ "b":1, "a":2 }'
is "$rc" 0 "worldd call: exit 0"
is "$out" '{"seen":"{\"a\":2,\"b\":1}"}' "prints the output; the transition saw canonical input"
like "$err" '^worldd call: committed entry 1 \(invocation cli:ep1:t1\)$' "one stderr line naming the entry and invocation"
run_capture out2 err rc "$WORLDD" log get --store "$DB" 1
is "$rc" 0 "the entry is in the log"
run_capture out2 err rc "$WORLDD" call --store "$DB" --session "$cred" --task t1 t.seen --json '{"a":2,"b":1}'
is "$out2" "$out" "same task id: the committed output again"
like "$err" 'replayed entry 1' "... said to be replayed"
run_capture out2 err rc "$WORLDD" call --store "$DB" --session "$cred" --task t1 t.seen --json '{"a":9}'
is "$rc" 8 "same task id, other args: exit 8"
like "$err" '^worldd call: task id already used in this session$' "... with the reference's text"
printf '{"from":"file"}' > "$T/args.json"
run_capture out err rc "$WORLDD" call --store "$DB" --session "$cred" t.seen --json-file "$T/args.json"
is "$out" '{"seen":"{\"from\":\"file\"}"}' "--json-file FILE"
run_capture out err rc bash -c "printf '{\"from\":\"stdin\"}' | '$WORLDD' call --store '$DB' --session '$cred' t.seen --json-file -"
is "$out" '{"seen":"{\"from\":\"stdin\"}"}' "--json-file - reads standard input"
run_capture out err rc "$WORLDD" call --store="$DB" --session="$cred" t.seen --json='{}'
is "$rc" 0 "--flag=value accepted"

n0=$("$SQLITE3_SHELL" "$DB" 'select count(*) from log_entries' 2>/dev/null || echo x)
run_capture out err rc "$WORLDD" call --store "$DB" --session "$cred" t.missing --json '{}'
is "$rc" 21 "unknown skill: exit 21"
like "$err" 'unknown skill "t.missing"' "... named"
run_capture out err rc "$WORLDD" call --store "$DB" --session "$cred" t.seen --json '[1]'
is "$rc" 3 "arguments not an object: exit 3"
run_capture out err rc "$WORLDD" call --store "$DB" --session "$cred" t.seen --json '{"a":'
is "$rc" 3 "malformed JSON: exit 3"
run_capture out err rc "$WORLDD" call --store "$DB" --session 0000000000000000000000000000000000000000000000000000000000000000 t.seen --json '{}'
is "$rc" 22 "unknown credential: exit 22"
like "$err" 'unknown session credential' "... named"
run_capture out err rc "$WORLDD" call --store "$DB" --session nothex t.seen --json '{}'
is "$rc" 22 "malformed credential: exit 22"
run_capture out err rc "$WORLDD" call --store "$DB" --session "$cred" t.seen
is "$rc" 2 "no arguments: usage"
run_capture out err rc "$WORLDD" call --store "$DB" --session "$cred" --task t2 --task t3 t.seen --json '{}'
is "$rc" 2 "a repeated flag is refused"
like "$err" 'flag --task given twice' "... named"
if [ -n "$SQLITE3_SHELL" ]; then
  is "$("$SQLITE3_SHELL" "$DB" 'select count(*) from log_entries')" "$n0" "refusals committed nothing"
else
  skip "no sqlite3 shell" "refusals committed nothing"
fi

run_capture out err rc "$WORLDD" session list --store "$DB"
is "$rc" 0 "session list: exit 0"
like "$out" '^[0-9a-f]{64} episode=ep1 expires_at=[0-9]+ live grants=Test.Echo=s:1/spent=0/remaining=1$' "one line per session"
unlike "$out" "$cred" "the credential itself is never shown"
id=${out%% *}
run_capture out err rc "$WORLDD" session list --store "$DB" --json
like "$out" "^\[\{\"created_at\":[0-9]+,\"episode\":\"ep1\",\"expires_at\":[0-9]+,\"grants\":\[\{\"budget\":1,\"effect\":\"Test.Echo\",\"remaining\":1,\"scope\":\"s\",\"spent\":0\}\],\"id\":\"$id\",\"live\":true\}\]$" "--json"
run_capture out err rc "$WORLDD" session revoke --store "$DB" 1111111111111111111111111111111111111111111111111111111111111111
is "$rc" 4 "revoking an unknown id: exit 4"
like "$err" 'nothing changed' "... nothing changed"
run_capture out err rc "$WORLDD" session revoke --store "$DB" "$id"
is "$out" "revoked 1 session(s)" "revoke by id"
run_capture out err rc "$WORLDD" call --store "$DB" --session "$cred" t.seen --json '{}'
is "$rc" 22 "a revoked credential is unknown"
"$FIX" "$T" ep2 'Test.Echo=s:1' >/dev/null && "$FIX" "$T" ep2 'Test.Echo=s:2' >/dev/null
run_capture out err rc "$WORLDD" session revoke --store "$DB" --episode ep2
is "$out" "revoked 2 session(s)" "revoke every session of an episode"

# hold_write DB SECONDS: another writer's transaction (the sqlite3 shell's
# BEGIN IMMEDIATE) held SECONDS; returns once it is held ($holder = its pid)
hold_write() {
  rm -f "$1.held"
  ( printf 'BEGIN IMMEDIATE;\n.shell touch %s.held\n' "$1"; sleep "$2"; printf 'ROLLBACK;\n' ) | "$SQLITE3_SHELL" "$1" >/dev/null 2>&1 &
  holder=$!
  for _ in $(seq 1 200); do [ -e "$1.held" ] && break; sleep 0.05; done
  rm -f "$1.held"
}
# --wait-lock is the busy timeout: how long a write waits for another
# writer's transaction (no process holds the store between transactions)
cred3=$("$FIX" "$T" ep3 'Test.Echo=s:1')
hold_write "$DB" 3
run_capture out err rc "$WORLDD" call --store "$DB" --session "$cred3" --wait-lock 0.3 t.seen --json '{}'
is "$rc" 5 "another writer's transaction outlasting --wait-lock 0.3: exit 5 (control)"
like "$err" "database is locked" "... one line saying the store is locked"
run_capture out err rc "$WORLDD" call --store "$DB" --session "$cred3" --wait-lock 20 t.seen --json '{}'
is "$rc" 0 "--wait-lock 20: the call waits for the other writer's transaction, then commits"
wait "$holder"
run_capture out err rc "$WORLDD" call --store "$DB" --session "$cred3" --wait-lock x t.seen --json '{}'
is "$rc" 2 "--wait-lock x: usage"

run_capture out err rc "$WORLDD" journal --store "$DB" --indeterminate
is "$rc" 0 "journal --indeterminate: exit 0"
is "$out" "0 indeterminate intent(s)" "a clean store has none"
run_capture out err rc "$WORLDD" journal --store "$DB" --indeterminate --json
is "$out" "[]" "--json"
run_capture out err rc "$WORLDD" scan --store "$DB"
is "$rc:$out" "0:" "the store scans clean"
done_testing
