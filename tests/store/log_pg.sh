#!/bin/bash
# tests/store/log_pg.sh: the verifiable log's verbs on a store named by a
# postgresql:// URI (issue 43; tests/pg_cluster.sh): a SQLite store with
# history copied into PostgreSQL (worldd store copy: its tree too); worldd
# log key init there (attended, through a pseudo-terminal, CI removed)
# puts the signer key in the host cache (XDG_CACHE_HOME/world/log-keys/,
# 0600), never in the database; log checkpoint, log prove and log get
# --leaf verify with world-verify; a call committed on PostgreSQL grows
# the tree (worldd call holds no key: the checkpoint lags) until
# log checkpoint --sign, and the consistency proof from the first
# checkpoint verifies; the scan on PostgreSQL is clean.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/pg_cluster.sh"
PTY="$top_srcdir/tests/publish/pty.py"
V="$top_builddir/verify/world-verify"
T=$(mktemp -d /tmp/world-log-pg.XXXXXX)
chmod 755 "$T"
trap 'pg_cluster_cleanup; rm -rf "$T"' EXIT
if ! pg_cluster_find; then
  skip "postgresql-15 (initdb, pg_ctl) is not installed" "the verifiable log on a postgresql:// store"
  done_testing
  exit 0
fi
if ! grep -q -- '-DWORLD_HAVE_PG=1' "$top_builddir/Makefile"; then
  skip "built without PostgreSQL" "the verifiable log on a postgresql:// store"
  done_testing
  exit 0
fi
pg_cluster_start || bail "could not start a throwaway PostgreSQL cluster"
export XDG_CACHE_HOME=$T/cache
DB="$T/world.db"
cred=$("$top_builddir/tests/coordinator/ctest-fixture" "$T" seed 'Test.Echo=s:1') || bail "ctest-fixture"
for i in 1 2; do
  "$WORLDD" call --store "$DB" --session "$cred" t.seen --json "{\"n\":$i}" >/dev/null 2>"$T/call.err" || bail "call $i: $(cat "$T/call.err")"
done
U=$PG_URI
"$WORLDD" store copy "$DB" "$U" >"$T/copy.out" 2>"$T/copy.err"
is "$?" 0 "the history copied into PostgreSQL ($(tail -n1 "$T/copy.err"))"
grep -q '^table log_tree rows=' "$T/copy.out"; ok $? "... its log_tree too"

env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '[y/N] ' --answer y --out "$T/o" --err "$T/e" --tty "$T/t" -- \
  "$WORLDD" log key init --store "$U"
is "$?" 0 "log key init on PostgreSQL, confirmed at a terminal ($(cat "$T/e"))"
VKEY=$(cat "$T/o")
printf '%s\n' "$VKEY" > "$T/vk"
KF=$(ls "$XDG_CACHE_HOME"/world/log-keys/*.log-key 2>/dev/null | head -n1)
ok "$([ -n "$KF" ]; echo $?)" "the signer key is in the host cache: ${KF#$T/}"
is "$(stat -c %a "$KF" 2>/dev/null)" 600 "... 0600"
is "$("$WORLDD" log key --store "$U")" "$VKEY" "log key prints the stored verifier key"
"$WORLDD" log checkpoint --store "$U" > "$T/cp2"
is "$(sed -n 2p "$T/cp2")" 2 "the first checkpoint: tree size 2"
run_capture out err rc "$V" checkpoint --key "$T/vk" "$T/cp2"
is "$rc" 0 "world-verify checkpoint ($err)"
"$WORLDD" log get --store "$U" 2 --leaf > "$T/leaf2"
"$WORLDD" log get --store "$DB" 2 --leaf > "$T/leaf2s"
cmp -s "$T/leaf2" "$T/leaf2s"; ok $? "leaf 2 is the same bytes on both backends"
"$WORLDD" log prove --store "$U" --index 2 --size 2 > "$T/p2"
run_capture out err rc "$V" inclusion --key "$T/vk" --checkpoint "$T/cp2" --index 2 --leaf "$T/leaf2" --proof "$T/p2"
is "$rc" 0 "world-verify inclusion of entry 2 ($err)"

"$WORLDD" call --store "$U" --session "$cred" t.seen --json '{"n":3}' >/dev/null 2>"$T/call.err"
is "$?" 0 "a call commits on PostgreSQL ($(cat "$T/call.err"))"
is "$(sed -n 2p <("$WORLDD" log checkpoint --store "$U"))" 2 "worldd call holds no key: the stored checkpoint is still of size 2"
"$WORLDD" log checkpoint --store "$U" --sign > "$T/cp3"
is "$(sed -n 2p "$T/cp3")" 3 "log checkpoint --sign: size 3"
"$WORLDD" log prove --store "$U" --from 2 --to 3 > "$T/c23"
run_capture out err rc "$V" consistency --key "$T/vk" --old "$T/cp2" --new "$T/cp3" --proof "$T/c23"
is "$rc" 0 "world-verify consistency 2 -> 3 ($err)"
run_capture out err rc "$WORLDD" scan --store "$U"
is "$rc:$out" "0:" "the scan on PostgreSQL recomputes the tree: clean"
done_testing
