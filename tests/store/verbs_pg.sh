#!/bin/bash
# tests/store/verbs_pg.sh: the verbs on a store named by a postgresql:// URI
# (cli/store_uri.h; docs/store.md "PostgreSQL", naming a store), on a
# throwaway cluster (tests/pg_cluster.sh). A SQLite store with history (a
# published transition, a session, two calls) is copied into PostgreSQL
# (worldd store copy), then the static worldd -- which execs worldd-serve,
# linked with libpq -- reads it: log get, world head, epoch show, session
# list print what they print on the SQLite original; session mint and
# revoke (the mint attended, through a pseudo-terminal with CI removed from
# the child's environment) write it; scan, epoch bootstrap and
# world-publish transitions run on it; call commits an entry there, and why
# and replay print what they print on the SQLite original (the history made
# through the verbs on each backend and compared object by object:
# tests/store/prov_pg.sh).
# The credentials: a password in the URI (percent-encoded) or in
# --store-password-file (owner-only regular file, first line), never in any
# output, and masked in /proc/PID/cmdline of the running verb; a wrong one
# is one line naming postgresql://USER@HOST:PORT/DB, exit 9; the server
# down is one line, exit 9; --store-password-file on a SQLite path, twice,
# group-readable or absent is refused. Controls: the same verbs on the
# SQLite original succeed, the password really is in the argv given and in
# the URI, and the right password opens the store both ways.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/pg_cluster.sh"
PTY="$top_srcdir/tests/publish/pty.py"
WP="$top_builddir/cli/world-publish"
T=$(mktemp -d /tmp/world-verbs-pg.XXXXXX)
chmod 755 "$T"
trap 'pg_cluster_cleanup; rm -rf "$T"' EXIT

if ! pg_cluster_find; then
  skip "postgresql-15 (initdb, pg_ctl) is not installed" "the verbs on a postgresql:// store"
  done_testing
  exit 0
fi
# a build without the driver (configure --without-postgresql): the URI is refused in one line
if ! grep -q -- '-DWORLD_HAVE_PG=1' "$top_builddir/Makefile"; then
  run_capture out err rc "$WORLDD" log get --store "postgresql://u:pw@127.0.0.1:1/db" 1
  is "$rc:$(printf '%s\n' "$err" | wc -l)" "2:1" "built without PostgreSQL: a URI refused, one line, exit 2"
  unlike "$err" "pw@" "... the password not printed"
  done_testing
  exit 0
fi
# the store's own open of a URI (the PostgreSQL engine's pg_open)
if ! grep -q 'pg_open' "$top_srcdir/store/db_pg_store.c"; then
  skip "world_store_open takes no postgresql:// URI in this tree yet" "the verbs on a postgresql:// store"
  done_testing
  exit 0
fi
pg_cluster_start || bail "could not start a throwaway PostgreSQL cluster"
psqlc() { "$PG_BIN/psql" -X -q -A -t -h "$PG_SOCK" -p "$PG_PORT" -U worldsu "$@"; }

# ---- a SQLite store with history
DB="$T/world.db"
cred=$("$top_builddir/tests/coordinator/ctest-fixture" "$T" seed 'Test.Echo=s:1') || bail "ctest-fixture"
for i in 1 2; do
  "$WORLDD" call --store "$DB" --session "$cred" t.seen --json "{\"n\":$i}" >/dev/null 2>"$T/call.err" || bail "call $i: $(cat "$T/call.err")"
done

# ---- a role with a password over TCP (scram-sha-256), its own database
PW='Vq7:s@/x%Z?pw&9'
PWENC=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$PW")
WRONG='Wr0ngPassw0rdXYZ'
psqlc -d world -c "CREATE ROLE wu LOGIN PASSWORD '$PW'" || bail "create role"
for d in w1 w2; do
  psqlc -d world -c "CREATE DATABASE $d OWNER wu" && psqlc -d "$d" -c "ALTER SCHEMA public OWNER TO wu" || bail "create $d"
done
printf '%s\n' "$PW" > "$T/pw"
chmod 600 "$T/pw"
printf '%s\n' "$WRONG" > "$T/wrong.pw"
chmod 600 "$T/wrong.pw"
U="postgresql://wu@$PG_TCP/w1"
UPW="postgresql://wu:$PWENC@$PG_TCP/w1"
NAME="postgresql://wu@$PG_TCP/w1"
"$WORLDD" store copy --dest-password-file "$T/pw" "$DB" "$U" >"$T/copy.out" 2>"$T/copy.err" || bail "store copy: $(cat "$T/copy.err")"
ok "$(grep -q "^copy $DB $NAME rows=" "$T/copy.out"; echo $?)" "the history copied into PostgreSQL (worldd store copy)"

ALL="$T/all-output" # every byte any verb printed below, grepped for the password at the end
: > "$ALL"
pgrun() { # pgrun OUT ERR RC CMD...: run_capture, everything kept for the leak check
  run_capture "$@"
  printf '%s\n%s\n' "${!1}" "${!2}" >> "$ALL"
}
rows() { psqlc -d w1 -c "SELECT (SELECT count(*) FROM objects) || ' ' || (SELECT count(*) FROM log_entries) || ' ' || (SELECT count(*) FROM journal) || ' ' || (SELECT count(*) FROM sessions) || ' ' || (SELECT count(*) FROM heads)"; }

# ---- reads: the same answers as the SQLite original, the password from the file and from the URI
for args in "log get 1" "log get 2" "world head" "epoch show" "session list"; do
  # shellcheck disable=SC2086
  run_capture sout serr src "$WORLDD" $args --store "$DB"
  # shellcheck disable=SC2086
  pgrun out err rc "$WORLDD" $args --store "$U" --store-password-file "$T/pw"
  is "$rc:$out" "$src:$sout" "worldd $args on PostgreSQL (password file) prints what it prints on SQLite (exit $src)"
  # shellcheck disable=SC2086
  pgrun out err rc "$WORLDD" $args --store "$UPW"
  is "$rc:$out" "$src:$sout" "... and with the password in the URI"
done
ok "$([ "$src" = 0 ] && [ -n "$sout" ]; echo $?)" "control: the SQLite original has sessions to list"
pgrun out err rc "$WORLDD" log get "--store=$U" --store-password-file="$T/pw" 1
run_capture sout serr src "$WORLDD" log get --store "$DB" 1
is "$rc:$out" "0:$sout" "--store=URI and --store-password-file=FILE alike"
pgrun out err rc env -u CI -u GITHUB_ACTIONS "$WP" check --help
like "$out" "store-password-file" "world-publish --help names --store-password-file"
pgrun out err rc "$WORLDD" session list --help
like "$out" "--store-password-file FILE" "worldd session list --help names --store-password-file"

# ---- object put / get
printf 'some bytes \001\377' > "$T/obj"
pgrun out err rc "$WORLDD" object put --store "$U" --store-password-file "$T/pw" --semantic-id test/blob --as raw < "$T/obj"
ref=$out
run_capture sout serr src "$WORLDD" object put --store "$DB" --semantic-id test/blob --as raw < "$T/obj"
is "$rc:$ref" "0:$sout" "object put on PostgreSQL: the ref SQLite gives"
is "$(psqlc -d w1 -c "SELECT count(*) FROM objects WHERE ref = '$ref'")" 1 "... a row in PostgreSQL"
"$WORLDD" object get --store "$UPW" --payload "$ref" > "$T/obj.back" 2>>"$ALL"
ok "$(cmp -s "$T/obj" "$T/obj.back"; echo $?)" "object get --payload on the URI gives the bytes back"

# ---- session mint (attended) and revoke, written into PostgreSQL
before=$(rows)
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '[y/N] ' --answer y --out "$T/o" --err "$T/e" --tty "$T/t" -- \
  "$WORLDD" session mint --store "$U" --store-password-file "$T/pw" --episode ep2 --grant Workspace.Read=worktree:5 --ttl 600
rc=$?; out=$(cat "$T/o"); err=$(cat "$T/e"); cat "$T/o" "$T/e" "$T/t" >> "$ALL"
is "$rc" 0 "session mint on PostgreSQL, confirmed on the terminal: exit 0 ($err)"
like "$out" '^[0-9a-f]{64}$' "... the credential printed once"
id=$(printf '%s' "$out" | sha256sum | cut -d' ' -f1)
is "$(psqlc -d w1 -c "SELECT count(*) FROM sessions WHERE episode = 'ep2'")" 1 "... its session row is in PostgreSQL"
pgrun out err rc "$WORLDD" session list --store "$UPW"
like "$out" "^$id episode=ep2 " "... listed by session list on the URI"
env CI=true python3 "$PTY" --after '[y/N] ' --answer y --out "$T/o" --err "$T/e" --tty "$T/t" -- \
  "$WORLDD" session mint --store "$U" --store-password-file "$T/pw" --episode ep3 --grant Workspace.Read=worktree:5
is "$?:$(psqlc -d w1 -c "SELECT count(*) FROM sessions WHERE episode = 'ep3'")" "20:0" "session mint with CI set: refused (exit 20), nothing written"
cat "$T/o" "$T/e" >> "$ALL"
pgrun out err rc "$WORLDD" session revoke --store "$U" --store-password-file "$T/pw" --episode ep2
is "$rc:$(psqlc -d w1 -c "SELECT count(*) FROM sessions WHERE episode = 'ep2'")" "0:0" "session revoke on PostgreSQL: exit 0, the row gone"

# ---- scan, why and replay: what they print on the SQLite original (the store's name aside)
before=$(rows)
pgrun out err rc "$WORLDD" scan --store "$U" --store-password-file "$T/pw"
run_capture sout serr src "$WORLDD" scan --store "$DB"
is "$rc:$src:$(rows)" "0:0:$before" "scan on PostgreSQL: exit 0 as on the SQLite original, nothing written ($(printf '%s' "$out" | tail -n 1))"
for args in "why 1" "why 2 --json" "replay --all"; do
  # shellcheck disable=SC2086
  run_capture sout serr src "$WORLDD" $args --store "$DB"
  # shellcheck disable=SC2086
  pgrun out err rc "$WORLDD" $args --store "$UPW"
  is "$rc:$out:$(rows)" "$src:$sout:$before" "worldd $args on PostgreSQL prints what it prints on SQLite (exit $src), nothing written"
done
is "$src:$(printf '%s' "$sout" | tail -n 1)" "0:replayed 2, diverged 0" "control: replay --all on the SQLite original replays both calls"
# ---- call: an entry committed in PostgreSQL, the SQLite original untouched
sq_last=$("$WORLDD" world head --store "$DB")
pgrun out err rc "$WORLDD" call --store "$U" --store-password-file "$T/pw" --session "$cred" --task pg1 t.seen --json '{"n":3}'
is "$rc:$err" "0:worldd call: committed entry 3 (invocation cli:seed:pg1)" "call on PostgreSQL (the password file): entry 3 committed"
is "$(psqlc -d w1 -c "SELECT count(*) FROM log_entries WHERE entry_index = 3")" 1 "... its entry is a row in PostgreSQL"
is "$("$WORLDD" world head --store "$DB")" "$sq_last" "... the SQLite original's head unchanged"
pgrun out err rc "$WORLDD" why --store "$UPW" 3
is "$rc:$(printf '%s' "$out" | tail -n 1)" "0:all 10 link(s) verified" "why 3 on PostgreSQL: every link of the new call verified"
pgrun out err rc "$WORLDD" replay --store "$U" --store-password-file "$T/pw" --all
is "$rc:$(printf '%s' "$out" | tail -n 1)" "0:replayed 3, diverged 0" "replay --all on PostgreSQL: the copied calls and the new one identical"
before=$(rows)
pgrun out err rc "$WORLDD" epoch bootstrap --store "$U" --store-password-file "$T/pw" --ailang-bin "$AILANG_LITE"
is "$rc:$(rows)" "0:$before" "epoch bootstrap on a store with that epoch: exit 0, nothing written"
like "$out" "already nominates" "... it says so"
# a bootstrap refused after its archive (other bytes under the same release, not admitted): on
# PostgreSQL its one transaction rolled back -- no archive or interpreters row -- and no file named
# after the URI anywhere (the undo of a failed bootstrap removes files only for a SQLite path)
FAKE="$top_builddir/tests/publish/fake-interp"
arch() { psqlc -d w1 -c "SELECT (SELECT count(*) FROM archive) || ' ' || (SELECT count(*) FROM interpreters)"; }
arch_before=$(arch)
mkdir "$T/cwd"
pgrun out err rc sh -c "cd '$T/cwd' && exec '$WORLDD' epoch bootstrap --store '$U' --store-password-file '$T/pw' --ailang-bin '$FAKE'"
is "$rc:$(printf '%s\n' "$err" | grep -c .)" "8:1" "epoch bootstrap with bytes the epoch does not admit: refused in one line, exit 8 ($err)"
is "$(arch):$(rows)" "$arch_before:$before" "... its transaction rolled back: no archive row, no interpreters row, nothing else written"
is "$(ls -A "$T/cwd")" "" "... and no file named after the URI in its directory"
sqi() { python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM interpreters").fetchone()[0])' "$DB"; }
sq_before=$(sqi)
run_capture sout serr src "$WORLDD" epoch bootstrap --store "$DB" --ailang-bin "$FAKE"
is "$src:$(sqi)" "8:$((sq_before + 1))" "control: on the SQLite original the same refusal comes after the archive (its interpreters row kept)"
mkdir -p "$T/src"
printf 'module echo\nexport func main(input: string) -> string { "{\\"echo\\":${input}}" }\n' > "$T/src/echo.ail"
printf '[{"id":"tools.echo","title":"Echo","description":"echoes","transitionFnFile":"src/echo.ail","inputSchema":{"type":"object"},"outputSchema":{"type":"object"},"access":null,"declaredEffects":[]}]\n' > "$T/m.json"
(cd "$T" && env -u CI -u GITHUB_ACTIONS python3 "$PTY" --answer "publish 1 transitions to $NAME" --out "$T/o" --err "$T/e" --tty "$T/t" -- \
  "$WP" transitions --store "$U" --store-password-file "$T/pw" --manifest m.json --ailang-bin "$AILANG_LITE")
rc=$?; err=$(cat "$T/e"); cat "$T/o" "$T/e" "$T/t" >> "$ALL"
is "$rc" 0 "world-publish transitions on PostgreSQL, the phrase typed on the terminal: exit 0 ($err)"
like "$(cat "$T/t")" "publish 1 transitions to $NAME" "... the phrase names the store without its password"
is "$(psqlc -d w1 -c "SELECT count(*) FROM heads WHERE name = 'world/transition-registry/v1' AND revision = 2")" 1 \
  "... the registry's next revision is PostgreSQL's head"
# a new database: the bootstrap makes the store, archives the interpreter in it
pgrun out err rc "$WORLDD" epoch bootstrap --store "postgresql://wu:$PWENC@$PG_TCP/w2" --ailang-bin "$AILANG_LITE"
is "$rc" 0 "epoch bootstrap of an empty database (the password in the URI): exit 0 ($err)"
like "$out" "^bootstrapped world/epoch-registry/v1: epoch 1" "... it says so"
is "$(psqlc -d w2 -c "SELECT count(*) FROM archive")" 1 "... the interpreter's bytes are in PostgreSQL"

# ---- the password while a verb runs: masked in /proc/PID/cmdline
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '[y/N] ' --no-answer --out "$T/o" --err "$T/e" --tty "$T/t" -- \
  "$WORLDD" session mint --store "$UPW" --episode ep4 --grant Workspace.Read=worktree:5 &
ptypid=$!
child=
for _ in $(seq 1 600); do
  child=$(pgrep -P "$ptypid" | head -n 1)
  [ -n "$child" ] && grep -q 'y/N' "$T/t" 2>/dev/null && break
  sleep 0.1
done
cmdline=$(tr '\0' ' ' < "/proc/$child/cmdline" 2>/dev/null)
ptycmd=$(tr '\0' ' ' < "/proc/$ptypid/cmdline" 2>/dev/null)
like "$ptycmd" "wu:$PWENC@" "control: the URI given (the harness's own argv) holds the password"
like "$cmdline" "session mint --store postgresql://wu:\*@$PG_TCP/w1 " "the running verb's /proc/PID/cmdline: the URI with its password masked as one '*' (not its length)"
is "$(tr -dc '*' <<<"$cmdline" | wc -c):$(tr -cd '\0' < "/proc/$child/cmdline" | wc -c)" "1:1" "... one '*' in all, and one line (ps shows no run of NULs as long as the password)"
unlike "$cmdline" "$PWENC" "... not the password"
kill "$child" 2>/dev/null
wait "$ptypid" 2>/dev/null
cat "$T/o" "$T/e" "$T/t" >> "$ALL"
is "$(psqlc -d w1 -c "SELECT count(*) FROM sessions WHERE episode = 'ep4'")" 0 "... (the unanswered mint wrote nothing)"

# ---- credentials refused
pgrun out err rc "$WORLDD" log get --store "postgresql://wu:$WRONG@$PG_TCP/w1" 1
is "$rc:$(printf '%s\n' "$err" | grep -c .)" "9:1" "a wrong password in the URI: one line, exit 9"
like "$err" "^worldd log get: store $NAME: connect: .*password authentication failed" "... naming $NAME"
pgrun out err rc "$WORLDD" log get --store "$UPW" --store-password-file "$T/wrong.pw" 1
is "$rc:$(printf '%s\n' "$err" | grep -c .)" "9:1" "a wrong password in the file wins over the right one in the URI: one line, exit 9"
pgrun out err rc "$WORLDD" log get --store "postgresql://wu:$WRONG@$PG_TCP/w1" --store-password-file "$T/pw" 1
is "$rc" 0 "the right one in the file wins over a wrong one in the URI: exit 0"
pgrun out err rc "$WORLDD" log get --store "$U" 1
is "$rc" 9 "no password at all: exit 9 ($err)"
like "$err" "no password supplied \\(give it in a file: --store-password-file FILE" "... the line says where a password goes (--store-password-file)"
pgrun out err rc "$WORLDD" log get --store "$DB" --store-password-file "$T/pw" 1
is "$rc:$err" "2:worldd log get: usage: --store-password-file is for a postgresql:// --store only (see worldd log get --help)" \
  "--store-password-file with a SQLite path: usage, exit 2"
pgrun out err rc "$WORLDD" log get --store "$U" --store-password-file "$T/pw" --store-password-file "$T/pw" 1
is "$rc" 2 "--store-password-file given twice: usage, exit 2"
chmod 640 "$T/pw"
pgrun out err rc "$WORLDD" log get --store "$U" --store-password-file "$T/pw" 1
is "$rc:$err" "2:worldd log get: store $NAME: password file $T/pw: must be a regular file readable by its owner only (chmod 600)" \
  "a group-readable password file: refused in one line, exit 2"
chmod 600 "$T/pw"
pgrun out err rc "$WORLDD" log get --store "$U" --store-password-file "$T/absent" 1
is "$rc:$(printf '%s\n' "$err" | grep -c .)" "4:1" "an absent password file: one line, exit 4"
pgrun out err rc "$WP" transitions --store "$DB" --store-password-file "$T/pw" --manifest "$T/m.json"
is "$rc" 2 "world-publish: --store-password-file with a SQLite path: usage, exit 2"

# ---- the server down
bash -c "$PG_STOP" || bail "pg_ctl stop"
pgrun out err rc "$WORLDD" log get --store "$U" --store-password-file "$T/pw" 1
is "$rc:$(printf '%s\n' "$err" | grep -c .)" "29:1" "the server down: one line, exit 29 (unavailable)"
like "$err" "^worldd log get: store $NAME: connect: " "... naming the store ($err)"

# ---- never the password: in every output above
ok "$(grep -q "wu:$PWENC@" <<< "$UPW"; echo $?)" "control: the URI given holds the password"
ok "$(! grep -qF -- "$PW" "$ALL" && ! grep -qF -- "$PWENC" "$ALL" && ! grep -qF -- "$WRONG" "$ALL"; echo $?)" \
  "no output of any verb above holds the password (as typed, percent-encoded, or the wrong one)"
ok "$(grep -qF -- "$NAME" "$ALL"; echo $?)" "control: the outputs grepped name the store"
done_testing
