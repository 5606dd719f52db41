#!/bin/bash
# worldd store copy (store/copy.h) and worldd backup of a PostgreSQL store:
# a store with real history (published transitions, sessions, calls served
# over MCP by the daemon) copied SQLite -> SQLite and SQLite -> PostgreSQL
# -> SQLite (a throwaway cluster, tests/pg_cluster.sh); every table of the
# round trip row-identical to the original (dumped with the sqlite3 shell by
# key), the archive byte-identical, scan clean, why and replay --all the
# same. Refusals, each beside a control that succeeds: DEST exists, the
# PostgreSQL DEST not empty, a flipped payload byte in SRC, a wrong
# password (never printed), a copy killed by SIGKILL at the pause point
# copy.writing. CI=true changes nothing (the copy is not attended).
# Without postgresql-15 the SQLite half runs and the rest is skipped.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
. "$top_srcdir/tests/pg_cluster.sh"
command -v curl >/dev/null || { skip "curl not installed" "copy tests"; done_testing; exit; }
daemon_setup
trap 'daemon_kill; pg_cluster_cleanup; rm -rf "$T"' EXIT
S=$SQLITE3_SHELL
calls() { # N PREFIX: N tools_decho calls as $CRED, one as $CRED_GRANT of tests.secret
  local i
  for i in $(seq 1 "$1"); do
    mcp "$CRED" "{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"tools/call\",\"params\":{\"name\":\"tools_decho\",\"arguments\":{\"t\":\"$2$i\"}}}"
  done
  mcp "$CRED_GRANT" '{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"tests_dsecret","arguments":{"t":"s"}}}'
}
daemon_start || bail "daemon"
calls 6 a
daemon_stop
DB=$T/db
n_entries=$("$S" -readonly "$DB" "SELECT count(*) FROM log_entries")
ok "$([ "$n_entries" -ge 7 ]; echo $?)" "the original store has a history ($n_entries log entries)"
is "$("$S" -readonly "$DB" "SELECT count(DISTINCT episode) FROM episode_usage")" 2 "... calls of two sessions (episodes ep-a and ep-b)"
# every table by its key (objects with its rowid), values quoted (blobs as hex)
dump() {
  local t
  for t in "objects:rowid,ref,semantic_id,provenance,quote(payload),size,created_at:ref" \
           "log_entries:entry_index,semantics_epoch,entry_hash,quote(prev_entry_hash),transition_fn,interpreter,written_by,transition_ref,quote(entry_json),committed_at:entry_index" \
           "worlds:ref,revision,state_root,log_head,quote(payload):ref" "heads:name,ref,revision,updated_at:name" \
           "journal:id,phase,quote(intent_id),quote(kind),quote(subject),quote(episode),quote(effect),quote(scope),cost,quote(status),quote(ref),at:id" \
           "sessions:credential_hash,episode,grants,expires_at,created_at:credential_hash" \
           "interpreters:ref,version,size,archived_at:ref" "episode_objects:episode,ref:episode,ref" \
           "episode_usage:episode,calls,bytes:episode" "episode_entries:episode,entry_index:episode,entry_index" \
           "operator_token:id,token_hash,set_at:id"; do
    IFS=: read -r name cols key <<<"$t"
    echo "== $name"
    "$S" -readonly "$1" "SELECT $cols FROM $name ORDER BY $key" || echo "dump of $name failed"
  done
  echo "== user_version $("$S" -readonly "$1" "PRAGMA user_version")"
}
archive_of() { # DB: every file of the archive with its mode and hash
  (cd "$1.artifacts" && find . -type f -o -type d | sort | while read -r f; do
    if [ -f "$f" ]; then echo "$f $(stat -c %a "$f") $(sha256sum < "$f" | cut -c1-64)"; else echo "$f $(stat -c %a "$f")"; fi
  done)
}
dump "$DB" > "$T/orig.dump"
archive_of "$DB" > "$T/orig.art"
ok "$(grep -q '^== operator_token' "$T/orig.dump" && [ "$(sed -n '/^== operator_token/{n;p}' "$T/orig.dump" | grep -c '^1|')" = 1 ]; echo $?)" \
  "the original has an operator token row (the daemon installed it)"
ok "$([ "$(wc -l < "$T/orig.art")" -ge 5 ]; echo $?)" "the original has an archived interpreter"
empty=
for t in objects log_entries worlds heads journal sessions interpreters episode_objects episode_usage episode_entries operator_token; do
  [ "$("$S" -readonly "$DB" "SELECT count(*) FROM $t")" -gt 0 ] || empty="$empty $t"
done
is "$empty" "" "the original has rows in every table the copy carries (so the comparisons compare something)"
same_as_orig() { # DB LABEL: the store at DB is the original, table by table, and its archive
  dump "$1" > "$T/x.dump"
  if cmp -s "$T/orig.dump" "$T/x.dump"; then ok 0 "$2: every table row-identical to the original"
  else ok 1 "$2: every table row-identical to the original"; diff "$T/orig.dump" "$T/x.dump" | head -5 | sed 's/^/# /' | cut -c1-200; fi
  archive_of "$1" > "$T/x.art"
  is "$(cmp -s "$T/orig.art" "$T/x.art"; echo $?)" 0 "$2: the archive byte-identical (files, modes, hashes)"
  run_capture out err rc "$WORLDD" scan --store "$1" --objects
  is "$rc:$out" "0:" "$2: worldd scan --objects clean ($err)"
  local n
  for n in 1 "$n_entries"; do
    "$WORLDD" why "$n" --store "$DB" > "$T/why.a" 2>&1
    "$WORLDD" why "$n" --store "$1" > "$T/why.b" 2>&1
    is "$(sed "s|$1|DB|g" "$T/why.b" | cmp -s - <(sed "s|$DB|DB|g" "$T/why.a"); echo $?)" 0 "$2: worldd why $n prints the same"
  done
  "$WORLDD" replay --all --store "$DB" > "$T/rep.a" 2>&1
  "$WORLDD" replay --all --store "$1" > "$T/rep.b" 2>&1; rrc=$?
  is "$rrc:$(cmp -s "$T/rep.a" "$T/rep.b"; echo $?)" "0:0" "$2: worldd replay --all prints the same ($(tail -1 "$T/rep.b"))"
}
nothing_at() { # DEST: no DEST, no DEST.artifacts, no staging directory beside it
  local d b; d=$(dirname "$1"); b=$(basename "$1")
  [ ! -e "$1" ] && [ ! -e "$1.artifacts" ] && [ -z "$(ls -A "$d" | grep -F ".$b.copy-")" ]
}

# ---- SQLite -> SQLite ----
run_capture out err rc "$WORLDD" store copy "$DB" "$T/s2s.db"
is "$rc" 0 "store copy SQLite -> SQLite: exit 0 ($err)"
like "$out" "^copy $DB $T/s2s.db rows=[0-9]+ entries=$n_entries interpreters=1 scanned=yes$" "... the summary line"
is "$(printf '%s\n' "$out" | grep -c '^table [a-z_]* rows=[0-9]* sha256=[0-9a-f]\{64\}$')" 15 "... one line per table and the archive"
same_as_orig "$T/s2s.db" "SQLite -> SQLite"
is "$(stat -c %a "$T/s2s.db")/$(stat -c %a "$T/s2s.db.artifacts")" "600/700" "the copy is its owner's only"
is "$(ls -A "$T" | grep -cF '.copy-')" 0 "no staging directory is left"

# ---- DEST exists ----
sum=$(sha256sum < "$T/s2s.db")
run_capture out err rc "$WORLDD" store copy "$DB" "$T/s2s.db"
is "$rc" 8 "a copy onto an existing DEST: exit 8"
like "$err" "^worldd store copy: copy: $T/s2s.db exists; refusing" "... one line naming it"
is "$(sha256sum < "$T/s2s.db")" "$sum" "... DEST unchanged"
mkdir "$T/only.db.artifacts"
run_capture out err rc "$WORLDD" store copy "$DB" "$T/only.db"
is "$rc:$([ -e "$T/only.db" ]; echo $?)" "8:1" "DEST.artifacts existing is refused too, DEST not made"
rmdir "$T/only.db.artifacts"
run_capture out err rc "$WORLDD" store copy "$T/none.db" "$T/x.db"
is "$rc:$(nothing_at "$T/x.db"; echo $?)" "4:0" "a SRC that does not exist: exit 4, nothing written"

# ---- SRC damaged: one payload byte flipped ----
cp "$DB" "$T/bad.db" && cp -a "$DB.artifacts" "$T/bad.db.artifacts"
victim=$("$S" "$T/bad.db" "SELECT ref FROM objects WHERE semantic_id = 'world/invocation-output/v1' ORDER BY ref LIMIT 1")
"$S" "$T/bad.db" "UPDATE objects SET payload = CAST(substr(payload, 1, length(payload) - 1) || 'X' AS BLOB) WHERE ref = '$victim'"
run_capture out err rc "$WORLDD" store copy "$T/bad.db" "$T/frombad.db"
is "$(dump "$T/bad.db" | cmp -s - "$T/orig.dump"; echo $?)" 1 "control: the dump sees the flipped byte"
is "$rc" 7 "a SRC with a flipped payload byte: exit 7"
like "$err" "object $victim: its payload hashes to" "... naming the object"
ok "$(nothing_at "$T/frombad.db"; echo $?)" "... nothing left at DEST, no staging directory"

# ---- CI=true: not an attended step ----
run_capture out err rc env CI=true GITHUB_ACTIONS=true "$WORLDD" store copy "$DB" "$T/ci.db" </dev/null
is "$rc" 0 "CI=true, no terminal: the copy runs all the same ($err)"
is "$(dump "$T/ci.db" | cmp -s - "$T/orig.dump"; echo $?)" 0 "... and is the same copy"

# ---- killed midway ----
PD="$T/pause"; mkdir -p "$PD"
hooks=0; grep -q -- '-DWORLD_TEST_HOOKS=1' "$top_builddir/Makefile" && hooks=1
held_while() { # CMD SRC DEST: a copy held at copy.writing while CMD writes into SRC, then let go; sets held, hrc, hout
  rm -f "$PD"/*
  WORLD_TEST_PAUSE=copy.writing WORLD_TEST_PAUSE_DIR="$PD" "$WORLDD" store copy "$2" "$3" >"$T/held.out" 2>"$T/held.err" &
  local bp=$!
  for _ in $(seq 1 600); do [ -e "$PD/copy.writing.1.reached" ] && break; sleep 0.05; done
  [ -e "$PD/copy.writing.1.reached" ]; held=$?
  eval "$1"
  touch "$PD/copy.writing.1.go"
  wait "$bp"; hrc=$?
  hout=$(tail -n 1 "$T/held.err")
}
killed_at() { # DEST [PAUSE-NAME]: a copy held at copy.writing, SIGKILLed there
  rm -f "$PD"/*
  WORLD_TEST_PAUSE=copy.writing WORLD_TEST_PAUSE_DIR="$PD" "$WORLDD" store copy "$@" >/dev/null 2>&1 &
  local bp=$!
  for _ in $(seq 1 600); do [ -e "$PD/copy.writing.1.reached" ] && break; sleep 0.05; done
  [ -e "$PD/copy.writing.1.reached" ]; reached=$?
  kill -KILL "$bp"; wait "$bp" 2>/dev/null
}
if [ "$hooks" = 1 ]; then
  killed_at "$DB" "$T/k1.db"
  is "$reached" 0 "a SQLite -> SQLite copy held at copy.writing (objects written, the rest not)"
  ok "$([ ! -e "$T/k1.db" ] && [ ! -e "$T/k1.db.artifacts" ]; echo $?)" "killed there: no k1.db, no k1.db.artifacts"
  is "$(ls -d "$T"/.k1.db.copy-*/k1.db 2>/dev/null | wc -l)" 1 "... only the hidden staging directory, holding the unfinished copy"
  run_capture out err rc "$WORLDD" scan --store "$T/k1.db"
  is "$rc" 4 "... nothing opens as a store at DEST"
  rm -rf "$T"/.k1.db.copy-*
else
  skip "built without --enable-test-hooks (no pause points)" "killed SQLite copy"
fi

# ---- PostgreSQL ----
if ! pg_cluster_find; then
  skip "postgresql-15 is not installed (no initdb/pg_ctl in /usr/lib/postgresql/15/bin or \$PG_BINDIR)" "the PostgreSQL half"
  done_testing; exit
fi
if ! grep -q -- '-DWORLD_HAVE_PG=1' "$top_builddir/Makefile"; then
  skip "configured --without-postgresql (world-store-copy has no PostgreSQL driver)" "the PostgreSQL half"
  done_testing; exit
fi
[ -x "$top_builddir/cli/world-store-copy" ] || bail "cli/world-store-copy not built"
pg_cluster_start || bail "could not start a throwaway PostgreSQL cluster"
psqlc() { "$PG_BIN/psql" -X -q -A -t -h "$PG_SOCK" -p "$PG_PORT" -U worldsu "$@"; }
uri() { echo "postgresql://worldsu@/$1?host=$PG_SOCK&port=$PG_PORT"; }
nrel() { psqlc -d "$1" -c "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'"; }
for d in w2 w3 w4 w5 w6 w7 w8 wpw; do "$PG_BIN/createdb" -h "$PG_SOCK" -p "$PG_PORT" -U worldsu "$d" || bail "createdb $d"; done

run_capture out err rc "$WORLDD" store copy "$DB" "$(uri world)"
is "$rc" 0 "store copy SQLite -> PostgreSQL: exit 0 ($err)"
like "$out" "^copy $DB postgresql://worldsu@\[$PG_SOCK\]:$PG_PORT/world rows=[0-9]+ entries=$n_entries interpreters=1 scanned=no$" \
  "... the summary names the database (user, socket, port, database)"
printf '%s\n' "$out" | grep '^table ' > "$T/tables.s2p"
is "$(psqlc -d world -c "SELECT count(*) FROM log_entries")" "$n_entries" "... the log is in PostgreSQL"
is "$(psqlc -d world -c "SELECT count(*) FROM archive")" 1 "... and the interpreter's bytes (table archive)"
is "$(psqlc -d world -c "SELECT encode(sha256(bytes), 'hex') FROM archive")" \
  "$(sha256sum < "$(find "$DB.artifacts" -name ailang)" | cut -c1-64)" "... byte-identical"

run_capture out err rc "$WORLDD" store copy "$(uri world)" "$T/back.db"
is "$rc" 0 "store copy PostgreSQL -> SQLite: exit 0 ($err)"
like "$out" "entries=$n_entries interpreters=1 scanned=yes$" "... scanned"
is "$(printf '%s\n' "$out" | grep '^table ' | cmp -s - "$T/tables.s2p"; echo $?)" 0 "... every table's rows and digest as on the way in"
same_as_orig "$T/back.db" "SQLite -> PostgreSQL -> SQLite"

# backup of a PostgreSQL store: the same copy
run_capture out err rc "$WORLDD" backup --store "$(uri world)" "$T/bk.db"
is "$rc" 0 "worldd backup --store postgresql://...: exit 0 ($err)"
like "$out" "^backup $T/bk.db entries=$n_entries rows=[0-9]+ interpreters=1 objects=[0-9]+$" "... one summary line"
is "$(dump "$T/bk.db" | cmp -s - "$T/orig.dump"; echo $?)" 0 "... the backup is the original, table by table"

# ---- the PostgreSQL DEST is not empty ----
before=$(psqlc -d world -c "SELECT count(*) FROM objects")
run_capture out err rc "$WORLDD" store copy "$DB" "$(uri world)"
is "$rc" 8 "a copy into a PostgreSQL database that is not empty: exit 8"
like "$err" "is not an empty database" "... saying so"
is "$(psqlc -d world -c "SELECT count(*) FROM objects")" "$before" "... nothing written into it"
psqlc -d w5 -c "CREATE TABLE unrelated(x int)"
run_capture out err rc "$WORLDD" store copy "$DB" "$(uri w5)"
is "$rc:$(psqlc -d w5 -c "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")" "8:1" \
  "a database holding one unrelated table is not empty either (it is left as it was)"

# ---- SRC damaged -> PostgreSQL: refused, the database stays empty ----
run_capture out err rc "$WORLDD" store copy "$T/bad.db" "$(uri w2)"
is "$rc:$(nrel w2)" "7:0" "a damaged SRC into PostgreSQL: exit 7, the database still empty"
# a damaged PostgreSQL SRC: one payload byte flipped there
"$WORLDD" store copy "$DB" "$(uri w3)" >/dev/null 2>&1 || bail "copy into w3"
psqlc -d w3 -c "UPDATE objects SET payload = overlay(payload placing '\\x58'::bytea from 1 for 1) WHERE ref = '$victim'"
run_capture out err rc "$WORLDD" store copy "$(uri w3)" "$T/frompgbad.db"
is "$rc" 7 "a PostgreSQL SRC with a flipped payload byte: exit 7"
ok "$(nothing_at "$T/frompgbad.db"; echo $?)" "... nothing left at DEST"

# an archived interpreter damaged in PostgreSQL: re-hashed on the way out
"$WORLDD" store copy "$DB" "$(uri w6)" >/dev/null 2>&1 || bail "copy into w6"
psqlc -d w6 -c "UPDATE archive SET bytes = set_byte(bytes, 200, 255 - get_byte(bytes, 200))"
run_capture out err rc "$WORLDD" store copy "$(uri w6)" "$T/frompgart.db"
is "$rc" 7 "a PostgreSQL SRC whose archived interpreter has a changed byte: exit 7"
like "$err" "interpreter sha256:[0-9a-f]* hashes to" "... the interpreter re-hashed against its ref"
ok "$(nothing_at "$T/frompgart.db"; echo $?)" "... nothing left at DEST"
# PostgreSQL -> PostgreSQL: the same table lines
run_capture out err rc "$WORLDD" store copy "$(uri world)" "$(uri w7)"
is "$rc:$(printf '%s\n' "$out" | grep '^table ' | cmp -s - "$T/tables.s2p"; echo $?)" "0:0" \
  "store copy PostgreSQL -> PostgreSQL: exit 0, every table's rows and digest the same ($err)"

# ---- one snapshot: rows written into SRC while the copy runs are not in it ----
if [ "$hooks" = 1 ]; then
  cp "$DB" "$T/live.db" && cp -a "$DB.artifacts" "$T/live.db.artifacts"
  "$S" "$T/live.db" "PRAGMA journal_mode=WAL" >/dev/null
  held_while '"$S" "$T/live.db" "INSERT INTO episode_usage(episode, calls, bytes) VALUES (\"ep-late\", 1, 1)"' "$T/live.db" "$(uri w8)"
  is "$held:$hrc" "0:0" "a SQLite -> PostgreSQL copy held after its objects while a row is committed into SRC, then let go: exit 0 ($hout)"
  is "$("$S" -readonly "$T/live.db" "SELECT count(*) FROM episode_usage WHERE episode = 'ep-late'"):$(psqlc -d w8 -c "SELECT count(*) FROM episode_usage WHERE episode = 'ep-late'")" \
    "1:0" "... the row is in SRC (the control) and not in the copy: one snapshot"
  held_while 'psqlc -d w8 -c "INSERT INTO heads(name, ref, revision, updated_at) VALUES (\$\$late\$\$, \$\$x\$\$, 1, 1)"' "$(uri w8)" "$T/live2.db"
  is "$held:$hrc" "0:0" "a PostgreSQL -> SQLite copy held likewise while a head is committed into SRC: exit 0 ($hout)"
  is "$(psqlc -d w8 -c "SELECT count(*) FROM heads WHERE name = 'late'"):$("$S" -readonly "$T/live2.db" "SELECT count(*) FROM heads WHERE name = 'late'")" \
    "1:0" "... the head is in SRC (the control) and not in the copy (REPEATABLE READ)"
else
  skip "built without --enable-test-hooks (no pause points)" "one snapshot"
fi

# ---- killed midway into PostgreSQL ----
if [ "$hooks" = 1 ]; then
  killed_at "$DB" "$(uri w4)"
  is "$reached" 0 "a SQLite -> PostgreSQL copy held at copy.writing"
  for _ in $(seq 1 100); do [ "$(psqlc -d world -c "SELECT count(*) FROM pg_stat_activity WHERE datname = 'w4'")" = 0 ] && break; sleep 0.1; done
  is "$(nrel w4)" 0 "killed there: the database is still empty (the transaction died with it)"
  run_capture out err rc "$WORLDD" store copy "$DB" "$(uri w4)"
  is "$rc" 0 "... and a copy into it afterwards succeeds (the control) ($err)"
else
  skip "built without --enable-test-hooks (no pause points)" "killed PostgreSQL copy"
fi

# ---- passwords: over TCP, scram-sha-256 ----
GOOD=Cp9-good-Pw-41 WRONG=Cp9-wrong-Pw-77
psqlc -d world -c "CREATE ROLE copypw LOGIN PASSWORD '$GOOD'" && psqlc -d wpw -c "ALTER DATABASE wpw OWNER TO copypw; ALTER SCHEMA public OWNER TO copypw"
printf '%s\n' "$WRONG" > "$T/wrong.pw"; printf '%s\n' "$GOOD" > "$T/good.pw"; chmod 600 "$T/wrong.pw" "$T/good.pw"
TCP="postgresql://copypw@$PG_TCP/wpw"
run_capture out err rc "$WORLDD" store copy "$DB" "postgresql://copypw:$WRONG@$PG_TCP/wpw"
ok "$([ "$rc" != 0 ]; echo $?)" "a wrong password in the URI: refused (exit $rc)"
ok "$(printf '%s%s' "$out" "$err" | grep -qF -- "$WRONG"; [ $? = 1 ]; echo $?)" "... and it appears in no output ($err)"
run_capture out err rc "$WORLDD" store copy --dest-password-file "$T/wrong.pw" "$DB" "$TCP"
ok "$([ "$rc" != 0 ] && ! printf '%s%s' "$out" "$err" | grep -qF -- "$WRONG"; echo $?)" "a wrong password in a password file: refused, not printed"
run_capture out err rc "$WORLDD" backup --store "$TCP" --store-password-file "$T/wrong.pw" "$T/pwbk.db"
ok "$([ "$rc" != 0 ] && ! printf '%s%s' "$out" "$err" | grep -qF -- "$WRONG" && nothing_at "$T/pwbk.db"; echo $?)" \
  "backup with a wrong password: refused, not printed, nothing at DEST"
is "$(nrel wpw)" 0 "... the database is still empty"
run_capture out err rc "$WORLDD" store copy --dest-password-file "$T/good.pw" "$DB" "$TCP"
is "$rc" 0 "control: the right password (file) copies ($err)"
ok "$(printf '%s%s' "$out" "$err" | grep -qF -- "$GOOD"; [ $? = 1 ]; echo $?)" "... the right password is not printed either"
run_capture out err rc "$WORLDD" backup --store "$TCP" --store-password-file "$T/good.pw" "$T/pwbk.db"
is "$rc" 0 "control: backup over TCP with the right password file ($err)"
is "$(dump "$T/pwbk.db" | cmp -s - "$T/orig.dump"; echo $?)" 0 "... the original, table by table"
run_capture out err rc "$WORLDD" backup --store "$DB" --store-password-file "$T/good.pw" "$T/pwx.db"
is "$rc" 2 "--store-password-file with a SQLite store: usage error"

done_testing
