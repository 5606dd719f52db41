#!/bin/bash
# tests/store/prov_pg.sh: the backend comparison of issue 26 -- the same
# history made through the verbs on a SQLite store and, independently, on a
# postgresql:// store (a throwaway cluster, tests/pg_cluster.sh), then every
# object byte, every entry hash and the output of scan, why and replay
# compared between the two (docs/store.md "PostgreSQL", docs/provenance.md
# "On PostgreSQL").
#
# The history, the same verbs on each backend: epoch bootstrap; two
# world-publish transitions (packages/quickstart, packages/se-tools; the
# phrase typed at a pseudo-terminal, CI removed from that child's
# environment); a session minted the same way (episode ep1: Workspace.Read
# and Workspace.Write, budget 2 each); then worldd call: a pure call
# (tools.echo), an effectful write and read (ailang-write, ailang-read under
# --workspace-root), an effectful call whose handler failed (no
# --workspace-root: committed, exit 27), one the broker refused (the write
# budget spent: committed with a denied effect record), a task id reused
# with other arguments (refused, exit 8, nothing written), an unknown skill
# (refused, exit 21, nothing written), and the first task id again (its
# committed result replayed). Every call's exit code and stdout are the
# same on both.
#
# Compared: every object's ref, semantic id, provenance and payload bytes;
# every entry's index, hash, previous hash and canonical JSON (log get N);
# the world head; scan; why N for every N and head, text and --json; replay
# N --json and replay --all, text and --json. The only normalisation: the
# store's name (the SQLite path, postgresql://USER@HOST:PORT/DB) replaced by
# STORE in the verbs' output, where a message names the store it read.
# Controls: a third history, on SQLite, that differs in one argument (the
# pure call's task id) gives other entry hashes, other object bytes and
# other why and replay output, so each comparison can fail; and after the
# comparison one payload byte of the PostgreSQL store's plan is flipped: its
# scan, why and replay then differ from SQLite's (and report the hole), so
# the outputs compared are the store's own verdicts; the same byte flipped in
# the SQLite store, the two print the same holes, broken links and
# divergences again.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/pg_cluster.sh"
PTY="$top_srcdir/tests/publish/pty.py"
WP="$top_builddir/cli/world-publish"
T=$(mktemp -d /tmp/world-prov-pg.XXXXXX)
chmod 755 "$T"
trap 'pg_cluster_cleanup; rm -rf "$T"' EXIT

pg_cluster_or_skip "the backend comparison"
psqlc() { "$PG_BIN/psql" -X -q -A -t -h "$PG_SOCK" -p "$PG_PORT" -U worldsu "$@"; }

PW='pr0v:Pw@x%9'
psqlc -d world -c "CREATE ROLE wu LOGIN PASSWORD '$PW'" || bail "create role"
psqlc -d world -c "CREATE DATABASE h1 OWNER wu" && psqlc -d h1 -c "ALTER SCHEMA public OWNER TO wu" || bail "create h1"
printf '%s\n' "$PW" > "$T/pw"
chmod 600 "$T/pw"
U="postgresql://wu@$PG_TCP/h1"
DB="$T/sq/world.db"
DB3="$T/sq3/world.db"
SQ=(--store "$DB")
SQ3=(--store "$DB3")
PG=(--store "$U" --store-password-file "$T/pw")
mkdir -p "$T/sq" "$T/sq3" "$T/pg"

# history NAME DIR TASK STORE-ARGS...: the history above on one store
# (NAME: the store as the verbs name it, for the publish phrase; TASK: the
# pure call's task id). Each call's "rc stdout" goes to DIR/calls.
history() {
  local name=$1 dir=$2 task=$3 pkg n rc
  shift 3
  mkdir -p "$dir/ws/ep1"
  "$WORLDD" epoch bootstrap "$@" --ailang-bin "$AILANG_LITE" > "$dir/boot.out" 2> "$dir/boot.err" ||
    { echo "bootstrap: $(cat "$dir/boot.err")"; return 1; }
  for pkg in quickstart se-tools; do
    n=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$top_srcdir/packages/$pkg/transitions.json")
    (cd "$top_srcdir" && env -u CI -u GITHUB_ACTIONS python3 "$PTY" --answer "publish $n transitions to $name" \
      --out "$dir/pub.out" --err "$dir/pub.err" --tty "$dir/pub.tty" -- \
      "$WP" transitions "$@" --manifest "packages/$pkg/transitions.json" --ailang-bin "$AILANG_LITE") ||
      { echo "publish $pkg: $(cat "$dir/pub.err")"; return 1; }
  done
  env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '[y/N] ' --answer y --out "$dir/cred" --err "$dir/mint.err" --tty "$dir/mint.tty" -- \
    "$WORLDD" session mint "$@" --episode ep1 --grant Workspace.Read=worktree:2 --grant Workspace.Write=worktree:2 ||
    { echo "mint: $(cat "$dir/mint.err")"; return 1; }
  local cred; cred=$(cat "$dir/cred")
  : > "$dir/calls"
  call() { # call ARGS...: one worldd call, its exit code and stdout appended to DIR/calls
    "$WORLDD" call "${store[@]}" --session "$cred" "$@" > "$dir/call.out" 2> "$dir/call.err"
    rc=$?
    printf '%s %s\n' "$rc" "$(cat "$dir/call.out")" >> "$dir/calls"
    cat "$dir/call.err" >> "$dir/calls.err"
  }
  local store=("$@")
  call --task "$task" tools.echo --json '{"message":"hello"}'
  call --workspace-root "$dir/ws" --task w1 ailang-write --json '{"path":"notes.txt","content":"hi\n"}'
  call --workspace-root "$dir/ws" --task r1 ailang-read --json '{"path":"notes.txt"}'
  call --task w2 ailang-write --json '{"path":"other.txt","content":"no root\n"}'
  call --workspace-root "$dir/ws" --task w3 ailang-write --json '{"path":"third.txt","content":"over budget\n"}'
  call --task "$task" tools.echo --json '{"message":"other arguments"}'
  call --task u1 no.such.skill --json '{}'
  call --task "$task" tools.echo --json '{"message":"hello"}'
  return 0
}
out=$(history "$DB" "$T/sq" hello "${SQ[@]}") || bail "the SQLite history: $out"
out=$(history "$U" "$T/pg" hello "${PG[@]}") || bail "the PostgreSQL history: $out"
out=$(history "$DB3" "$T/sq3" hallo "${SQ3[@]}") || bail "the control history: $out"

# ---- the calls: the same exit codes and outputs on both
is "$(cut -d' ' -f1 "$T/sq/calls" | tr '\n' ' ')" "0 0 0 27 0 8 21 0 " \
  "the SQLite history's calls: pure, write, read, a failed effect (27), over budget, reused task (8), unknown skill (21), replayed"
is "$(cat "$T/pg/calls")" "$(cat "$T/sq/calls")" "the PostgreSQL history's calls: the same exit codes and outputs"
sed 's/^/# /' "$T/pg/calls.err"
like "$(sed -n 5p "$T/sq/calls")" '"status":"denied"' "... the fifth call's effect denied by the broker (budget spent)"
ok "$(grep -q '^worldd call: replayed entry 1 ' "$T/pg/calls.err"; echo $?)" "... the last call on PostgreSQL replayed entry 1"

# ---- every object byte, every entry hash
sq_objects() { python3 - "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
for r in c.execute("SELECT ref, semantic_id, provenance, hex(payload) FROM objects ORDER BY ref"):
    print(r[0], r[1], r[2], r[3].lower())
PY
}
pg_objects() { psqlc -d h1 -F ' ' -c "SELECT ref, semantic_id, provenance, encode(payload, 'hex') FROM objects ORDER BY ref COLLATE \"C\""; }
sq_entries() { python3 - "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
for r in c.execute("SELECT entry_index, entry_hash, coalesce(prev_entry_hash, '-'), transition_ref, hex(entry_json) FROM log_entries ORDER BY entry_index"):
    print(r[0], r[1], r[2], r[3], r[4].lower())
PY
}
pg_entries() { psqlc -d h1 -F ' ' -c "SELECT entry_index, entry_hash, coalesce(prev_entry_hash, '-'), transition_ref, encode(entry_json, 'hex') FROM log_entries ORDER BY entry_index"; }
sq_objects "$DB" > "$T/sq.objects"
pg_objects > "$T/pg.objects"
sq_objects "$DB3" > "$T/sq3.objects"
sq_entries "$DB" > "$T/sq.entries"
pg_entries > "$T/pg.entries"
sq_entries "$DB3" > "$T/sq3.entries"
nobj=$(wc -l < "$T/sq.objects")
nent=$(wc -l < "$T/sq.entries")
is "$nent" 5 "the history committed 5 entries (pure, write, read, failed effect, denied effect)"
ok "$([ "$nobj" -gt 20 ]; echo $?)" "... and $nobj objects"
ok "$(cmp -s "$T/sq.objects" "$T/pg.objects"; echo $?)" "every object (ref, semantic id, provenance, payload bytes) is the same on both backends"
diff "$T/sq.objects" "$T/pg.objects" | head -n 6 | sed 's/^/# /'
ok "$(cmp -s "$T/sq.entries" "$T/pg.entries"; echo $?)" "every entry (index, hash, previous hash, record, canonical JSON) is the same on both backends"
diff "$T/sq.entries" "$T/pg.entries" | head -n 6 | sed 's/^/# /'
nok "$(cmp -s "$T/sq.objects" "$T/sq3.objects"; echo $?)" "control: the history with another task id has other objects"
is "$(cut -d' ' -f2 "$T/sq.entries" | sort -u | wc -l):$(cut -d' ' -f2 "$T/sq.entries" "$T/sq3.entries" | sort -u | wc -l)" \
  "$nent:$((2 * nent))" "control: ... and another hash for every entry (the chain carries the change)"

# ---- the verbs' output, the store's name normalised
norm() { sed -e "s|$U|STORE|g" -e "s|$DB3|STORE|g" -e "s|$DB|STORE|g"; }
# both STORE-ARGS... -- VERB ARGS...: VERB on each store; out/rc of each, normalised
same() { # same WHAT VERB-ARGS...: the verb on all three stores; asserts SQLite = PostgreSQL
  local what=$1; shift
  "$WORLDD" "$@" "${SQ[@]}" > "$T/a.out" 2> "$T/a.err"; local ra=$?
  "$WORLDD" "$@" "${PG[@]}" > "$T/b.out" 2> "$T/b.err"; local rb=$?
  "$WORLDD" "$@" "${SQ3[@]}" > "$T/c.out" 2> "$T/c.err"; local rc3=$?
  norm < "$T/a.out" > "$T/a.n"; norm < "$T/b.out" > "$T/b.n"; norm < "$T/c.out" > "$T/c.n"
  norm < "$T/a.err" > "$T/a.en"; norm < "$T/b.err" > "$T/b.en"
  is "$rb:$(cat "$T/b.n")" "$ra:$(cat "$T/a.n")" "worldd $* $what: PostgreSQL prints what SQLite prints (exit $ra, $(wc -l < "$T/a.out") lines)"
  is "$(cat "$T/b.en")" "$(cat "$T/a.en")" "... and the same on stderr"
  SAME_RC=$ra
}
differs() { # the control store's output of the last `same` differs from SQLite's
  nok "$(cmp -s "$T/a.n" "$T/c.n"; echo $?)" "control: ... the history with another task id prints something else"
}
same "" scan
is "$SAME_RC:$(wc -c < "$T/a.out")" "0:0" "... scan: exit 0, nothing printed (clean and complete)"
cp "$T/a.n" "$T/scan.sq"
same "(objects too)" scan --objects
# a scan cut short prints its cursors (log index, world ref, object ref): the same on both
same "" scan --objects --rows 3
like "$(cat "$T/a.n")" "^integrity_scan_incomplete log_rows=3 .*resume_log_index=4 resume_world_ref=sha256:[0-9a-f]{64}" \
  "... scan --rows 3: incomplete, its cursors printed ($(cat "$T/a.n"))"
for i in $(seq 1 "$nent") head; do
  same "" why "$i"
  is "$SAME_RC" 0 "... why $i: every link verified"
  differs
  same "" why "$i" --json
  differs
done
like "$(cat "$T/a.n")" '"broken":0' "why head --json: no link broken"
for i in $(seq 1 "$nent"); do
  same "" replay "$i" --json
done
same "" replay --all
is "$SAME_RC:$(tail -n 1 "$T/a.n")" "0:replayed $nent, diverged 0" "... replay --all: every entry identical"
differs
same "" replay --all --json
differs
same "" why cli:ep1:w1
same "" log get 2
same "" world head
differs

# ---- control: a damaged plan on PostgreSQL (one payload byte flipped) -- scan, why and replay see it
plan=$(psqlc -d h1 -c "SELECT ref FROM objects WHERE semantic_id = 'world/effect-plan/v1' ORDER BY seq LIMIT 1")
eidx=$(psqlc -d h1 -c "SELECT entry_index FROM log_entries l JOIN objects o ON o.ref = l.transition_ref WHERE position('$plan' in convert_from(o.payload, 'UTF8')) > 0 ORDER BY entry_index LIMIT 1")
ok "$([ -n "$plan" ] && [ -n "$eidx" ]; echo $?)" "control: the plan of entry $eidx found ($plan)"
psqlc -d h1 -c "UPDATE objects SET payload = overlay(payload placing '\\x5a'::bytea from 3 for 1) WHERE ref = '$plan'" ||
  bail "tamper"
run_capture out err rc "$WORLDD" scan "${PG[@]}"
nok "$([ "$(printf '%s\n' "$out" | norm)" = "$(cat "$T/scan.sq")" ]; echo $?)" "control: scan of the damaged PostgreSQL store differs from SQLite's"
like "$out" "integrity_hole table=objects index=$eidx field=plan ref=$plan" "... it names the hole ($(printf '%s' "$out" | head -n 1))"
run_capture out err rc "$WORLDD" why "${PG[@]}" "$eidx"
is "$rc" 7 "control: why $eidx on the damaged store: a link broken, exit 7"
like "$out" "^✗ plan $plan " "... the plan link"
run_capture out err rc "$WORLDD" replay "${PG[@]}" "$eidx"
is "$rc" 7 "control: replay $eidx on the damaged store: diverged, exit 7"
like "$out" "^entry $eidx cli:ep1:w1 diverged at stage plan" "... at stage plan ($out)"
# the same byte flipped in the SQLite store: scan, why and replay print the same verdicts on both
python3 - "$DB" "$plan" <<'PY' || bail "tamper the SQLite store"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
p = bytearray(c.execute("SELECT payload FROM objects WHERE ref = ?", (sys.argv[2],)).fetchone()[0])
p[2] = 0x5a
c.execute("UPDATE objects SET payload = ? WHERE ref = ?", (bytes(p), sys.argv[2]))
c.commit()
PY
for v in "scan" "scan --objects" "why $eidx" "why $eidx --json" "replay $eidx" "replay --all" "replay --all --json"; do
  # shellcheck disable=SC2086
  same "(both damaged alike)" $v
  is "$SAME_RC" 7 "... exit 7"
done
done_testing
