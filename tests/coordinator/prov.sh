#!/bin/bash
# tests/coordinator/prov.sh: worldd why, worldd replay and worldd scan over a
# store of every kind of committed call (prov-fixture: pure, effect ok with
# finish, refused by the plan, denied by the broker, failed handler, effect
# ok without finish). The clean store walks, replays and scans clean (the
# control); then each tampering -- a stored payload, an effect record, a
# request, a result, the transition source, the archived interpreter, its
# manifest, the journal -- done on a fresh copy with the sqlite3 shell or on
# the archive's files, is caught by why (the link), replay (the stage) and
# scan (the hole line). Replay and why write nothing (the store file's bytes,
# no WAL), and a read-only copy is walkable, also by an unprivileged user.
. "$top_srcdir/tests/tap.sh"
T=$(mktemp -d /tmp/world-prov.XXXXXX)
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
W=$WORLDD
SQ=$SQLITE3_SHELL
if [ -z "$SQ" ]; then
  skip "no sqlite3 shell" "provenance tests need the sqlite3 shell to read refs and tamper"
  done_testing; exit
fi
mkdir "$T/base"
"$top_builddir/tests/coordinator/prov-fixture" "$T/base" || bail "prov-fixture"
DB=$T/base/world.db

q() { "$SQ" "$1" "$2"; }
# field F of the invocation record of entry N in store DB
recf() { q "$1" "SELECT json_extract(CAST(payload AS TEXT), '\$.$3') FROM objects WHERE ref = (SELECT transition_ref FROM log_entries WHERE entry_index = $2)"; }
# field F of object REF
objf() { q "$1" "SELECT json_extract(CAST(payload AS TEXT), '\$.$3') FROM objects WHERE ref = '$2'"; }
fresh() { rm -rf "$T/t"; cp -a "$T/base" "$T/t"; D=$T/t/world.db; }
sha() { sha256sum "$1" | cut -d' ' -f1; }
ZERO=sha256:0000000000000000000000000000000000000000000000000000000000000000

# ---- the clean store (the control of every tampering below) ----
db_sha=$(sha "$DB")
for i in 1 2 3 4 5 6; do
  run_capture out err rc "$W" why --store "$DB" "$i"
  is "$rc" 0 "why $i: exit 0"
  like "$(printf '%s' "$out" | tail -1)" "^all [0-9]+ link\(s\) verified$" "why $i: every link verified"
done
# output that cannot be written: exit 9 (over any verdict), one error line
for v in "why --store $DB 2" "replay --store $DB 2" "replay --store $DB --all"; do
  # shellcheck disable=SC2086
  run_capture out err rc sh -c "'$W' $v > /dev/full"
  is "$rc:$(printf '%s\n' "$err" | grep -c .)" "9:1" "worldd $v > /dev/full: exit 9 and one error line"
  like "$err" "^worldd (why|replay): write standard output: No space left on device$" "... naming the full disk ($err)"
done
run_capture out err rc "$W" why --store "$DB" 2
for l in entry chain record world journal input plan 'effects\[0\]\.record' 'effects\[0\]\.request' \
         'effects\[0\]\.result' 'effects\[0\]\.journal' output source interpreter 'interpreter\.manifest'; do
  like "$out" "^✓ $l sha256:" "why 2 checks link $l"
done
like "$out" "^entry 2 cli:ep1:e1 record sha256:[0-9a-f]{64}$" "why names entry, invocation and record first"
run_capture out err rc "$W" why --store "$DB" 4
like "$out" "^✓ effects\[0\]\.record .*denied" "a denied effect: its record walked"
unlike "$out" "effects\[0\]\.request" "... and no request (a denial writes none)"
run_capture out err rc "$W" why --store "$DB" 1
unlike "$out" "^. plan " "a pure call has no plan link"
run_capture out err rc "$W" why --store "$DB" head
like "$out" "^entry 6 cli:ep1:o1 " "why head: the last entry"
rec2=$(q "$DB" "SELECT transition_ref FROM log_entries WHERE entry_index = 2")
hash2=$(q "$DB" "SELECT entry_hash FROM log_entries WHERE entry_index = 2")
out2=$(recf "$DB" 2 output)
for ref in "$rec2" "$hash2" "$out2" cli:ep1:e1; do
  run_capture out err rc "$W" why --store "$DB" "$ref"
  like "$out" "^entry 2 " "why ${ref:0:20}...: entry 2 found"
done
"$W" object get --store "$DB" "$out2" --payload > "$T/result.json"
run_capture out err rc sh -c "'$W' why --store '$DB' - < '$T/result.json'"
is "$rc" 0 "why - (a result on stdin): exit 0"
like "$out" "^✓ result sha256:.*byte for byte" "... the result itself is a verified link"
like "$out" "^entry 2 " "... found by its bytes"
sed 's/"finished"/"finishes"/' "$T/result.json" > "$T/forged.json"
run_capture out err rc sh -c "'$W' why --store '$DB' - < '$T/forged.json'"
is "$rc" 7 "why - of a forged result: exit 7"
like "$out" "^✗ result " "... the result link is broken"
like "$out" "^entry 2 " "... found through its world block"
like "$(printf '%s' "$out" | tail -1)" "^1 of [0-9]+ link\(s\) BROKEN$" "... one link of the walk broken"
run_capture out err rc sh -c "printf '[1]' | '$W' why --store '$DB' -"
is "$rc" 3 "why - of a non-object: exit 3"
run_capture out err rc "$W" why --store "$DB" 2 --json
is "$rc" 0 "why --json: exit 0"
like "$out" '^\{.*"broken":0,"entry":2,"invocationId":"cli:ep1:e1",.*"verified":15\}$' "why --json: one object with the counts"
run_capture out err rc "$W" why --store "$DB" 99
is "$rc" 4 "why of an absent entry: exit 4"
run_capture out err rc "$W" why --store "$DB" mcp:ep1:nope
is "$rc" 4 "why of an unknown invocation: exit 4"
run_capture out err rc "$W" why --store "$DB" "$ZERO"
is "$rc" 4 "why of an unknown ref: exit 4"
run_capture out err rc "$W" why --store "$DB" bogus
is "$rc" 2 "why of a malformed target: usage"

for i in 1 2 3 4 5 6; do
  run_capture out err rc "$W" replay --store "$DB" "$i"
  is "$rc" 0 "replay $i: exit 0 (no handler: worldd has none for Test.*)"
  like "$out" "^entry $i cli:ep1:[a-z0-9]+ identical$" "replay $i: identical"
done
run_capture out err rc "$W" replay --store "$DB" cli:ep1:d1
like "$out" "^entry 4 cli:ep1:d1 identical$" "replay by invocation id"
run_capture out err rc "$W" replay --store "$DB" --all
is "$rc" 0 "replay --all: exit 0"
is "$(printf '%s\n' "$out" | grep -c ' identical$')" 6 "replay --all: one line per entry"
is "$(printf '%s' "$out" | tail -1)" "replayed 6, diverged 0" "replay --all: the summary"
is "$err" "" "no progress line without a terminal"
run_capture out err rc "$W" replay --store "$DB" --all --from 2 --to 3
is "$out" "$(printf 'entry 2 cli:ep1:e1 identical\nentry 3 cli:ep1:r1 identical\nreplayed 2, diverged 0')" "replay --all --from --to"
run_capture out err rc "$W" replay --store "$DB" 2 --json
like "$out" '^\{"diverged":false,"effectful":true,"entry":2,"invocationId":"cli:ep1:e1"\}$' "replay --json"
run_capture out err rc "$W" replay --store "$DB" 99
is "$rc" 4 "replay of an absent entry: exit 4"
run_capture out err rc "$W" replay --store "$DB" 2 --all
is "$rc" 2 "replay N --all: usage"
run_capture out err rc "$W" scan --store "$DB"
is "$rc.$out" "0." "the clean store scans clean"
run_capture out err rc "$W" scan --store "$DB" --objects
is "$rc.$out" "0." "... also with --objects"
# --objects in budgeted steps covers every object once
nobj=$(q "$DB" "SELECT count(*) FROM objects")
total=0; lo=1; wo=$ZERO; oo=$ZERO
for step in $(seq 50); do
  out=$("$W" scan --store "$DB" --objects --rows 7 --resume-log-index "$lo" --resume-world-ref "$wo" --resume-object-ref "$oo")
  [ -z "$out" ] && break
  n=$(printf '%s' "$out" | sed -n 's/.* object_rows=\([0-9]*\) .*/\1/p'); total=$((total + n))
  lo=$(printf '%s' "$out" | sed -n 's/.* resume_log_index=\([0-9]*\) .*/\1/p')
  wo=$(printf '%s' "$out" | sed -n 's/.* resume_world_ref=\(sha256:[0-9a-f]*\) .*/\1/p')
  oo=$(printf '%s' "$out" | sed -n 's/.* resume_object_ref=\(sha256:[0-9a-f]*\)$/\1/p')
done
# the last (complete) step's objects are not printed: count them by difference
last=$(q "$DB" "SELECT count(*) FROM objects WHERE ref >= '$oo'")
is "$((total + last))" "$nobj" "budgeted --objects scans resume and cover all $nobj objects"
is "$(sha "$DB")" "$db_sha" "why, replay and scan left the store file byte-identical"
ok "$([ ! -e "$DB-wal" ] || [ ! -s "$DB-wal" ]; echo $?)" "... and wrote no WAL"

# ---- a read-only copy ----
mkdir "$T/ro"
cp -a "$DB" "$DB.artifacts" "$T/ro/"
# the store's files are its owner's only (0600, directories 0700): a copy
# shared with another user is opened up by whoever shares it
chmod 0444 "$T/ro/world.db"; chmod -R a+rX "$T/ro/world.db.artifacts"; chmod 0555 "$T/ro"
ro_sha=$(sha "$T/ro/world.db"); ro_ls=$(ls -a "$T/ro" | tr '\n' ' ')
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  # first unprivileged: the directory mode holds, so nothing may appear
  chmod 0755 "$T"
  nobody() { setpriv --reuid 65534 --regid 65534 --clear-groups "$@"; }
  run_capture out err rc nobody "$W" why --store "$T/ro/world.db" 4
  is "$rc" 0 "uid 65534 walks the read-only copy ($err)"
  run_capture out err rc nobody "$W" scan --store "$T/ro/world.db" --objects
  is "$rc.$out" "0." "uid 65534 scans it"
  run_capture out err rc nobody "$W" replay --store "$T/ro/world.db" --all
  is "$rc.$(printf '%s' "$out" | tail -1)" "0.replayed 6, diverged 0" "uid 65534 replays it (capsules in a user namespace of their own)"
  is "$(ls -a "$T/ro" | tr '\n' ' ')" "$ro_ls" "... and nothing is created beside it"
  chmod 0700 "$T"
else
  skip "not root or no setpriv" "uid 65534 walks the read-only copy"
  skip "not root or no setpriv" "uid 65534 scans it"
  skip "not root or no setpriv" "uid 65534 replays it"
  skip "not root or no setpriv" "nothing is created beside it"
fi
run_capture out err rc "$W" why --store "$T/ro/world.db" 2
is "$rc" 0 "a read-only copy is walkable ($err)"
run_capture out err rc "$W" replay --store "$T/ro/world.db" --all
is "$rc.$(printf '%s' "$out" | tail -1)" "0.replayed 6, diverged 0" "a read-only copy replays"
run_capture out err rc "$W" scan --store "$T/ro/world.db"
is "$rc.$out" "0." "a read-only copy scans"
is "$(sha "$T/ro/world.db")" "$ro_sha" "... left byte-identical"
# (root ignores the directory mode: SQLite may leave its empty reader files)
ok "$([ ! -s "$T/ro/world.db-wal" ]; echo $?)" "... with no WAL content"
chmod 0755 "$T/ro"

# ---- tampering: each caught by why (link), replay (stage) and scan (hole) ----
# check N LINK STAGE HOLE-REGEX [OFFSET]
check() {
  local n=$1 link=$2 stage=$3 hole=$4 off=${5:-}
  run_capture out err rc "$W" why --store "$D" "$n"
  is "$rc" 7 "$what: why $n exits 7"
  like "$out" "^✗ $link " "$what: why names link $link"
  run_capture out err rc "$W" replay --store "$D" "$n"
  is "$rc" 7 "$what: replay $n exits 7"
  like "$out" "^entry $n .* diverged at stage $stage, byte offset ${off:-[-0-9]+}:" "$what: replay diverges at stage $stage${off:+, byte $off}"
  run_capture out err rc "$W" scan --store "$D"
  is "$rc" 7 "$what: scan exits 7"
  like "$out" "$hole" "$what: scan reports $hole"
}
tamper() { q "$D" "UPDATE objects SET payload = CAST(replace(CAST(payload AS TEXT), '$2', '$3') AS BLOB) WHERE ref = '$1'"; }

fresh; what="input payload"
in1=$(recf "$D" 1 input); tamper "$in1" '"x"' '"y"'
check 1 input input "^integrity_hole table=objects index=1 field=input ref=$in1$"

fresh; what="plan payload"
plan2=$(recf "$D" 2 plan)
off=$(( $(q "$D" "SELECT instr(CAST(payload AS TEXT), '\"n\":7') FROM objects WHERE ref = '$plan2'") - 1 + 4 ))
tamper "$plan2" '"n":7' '"n":8'
check 2 plan plan "^integrity_hole table=objects index=2 field=plan ref=$plan2$" "$off"

fresh; what="effect record"
er2=$(recf "$D" 2 'effects[0]'); tamper "$er2" '"budgetBefore":5' '"budgetBefore":6'
check 2 'effects\[0\]\.record' effects "^integrity_hole table=objects index=2 field=effects\[0\] ref=$er2$"

fresh; what="effect request"
rq2=$(objf "$D" "$er2" requestRef)
off=$(( $(q "$D" "SELECT instr(CAST(payload AS TEXT), '\"n\":7') FROM objects WHERE ref = '$rq2'") - 1 + 4 ))
tamper "$rq2" '"n":7' '"n":9'
check 2 'effects\[0\]\.request' effects "^integrity_hole table=objects index=2 field=effects\[0\]\.requestRef ref=$rq2$" "$off"

fresh; what="effect result"
er6=$(recf "$D" 6 'effects[0]'); rs6=$(objf "$D" "$er6" resultRef); tamper "$rs6" '"ok":true' '"ok":false'
check 6 'effects\[0\]\.result' effects "^integrity_hole table=objects index=6 field=effects\[0\]\.resultRef ref=$rs6$"

fresh; what="stored output"
o2=$(recf "$D" 2 output)
off=$(( $(q "$D" "SELECT instr(CAST(payload AS TEXT), '\"k\":2') FROM objects WHERE ref = '$o2'") - 1 + 4 ))
tamper "$o2" '"k":2' '"k":3'
check 2 output output "^integrity_hole table=objects index=2 field=output ref=$o2$" "$off"
like "$out" "^integrity_hole table=worlds ref=sha256:[0-9a-f]{64} field=stateRoot$" "$what: the world's stateRoot too"

fresh; what="transition source"
src1=$(q "$D" "SELECT transition_fn FROM log_entries WHERE entry_index = 1")
tamper "$src1" 'seen' 'SEEN'
check 1 source input "^integrity_hole table=objects index=1 field=transitionFn ref=$src1$"

fresh; what="archived interpreter"
iref=$(q "$D" "SELECT interpreter FROM log_entries WHERE entry_index = 1")
ib=$D.artifacts/interpreters/sha256/${iref#sha256:}/ailang
chmod u+w "$ib" "$(dirname "$ib")"; printf 'x' >> "$ib"
check 1 interpreter input "^integrity_hole table=artifacts index=1 field=interpreter ref=$iref$"

fresh; what="interpreter manifest"
man=$D.artifacts/interpreters/sha256/${iref#sha256:}/manifest.json
chmod u+w "$man" "$(dirname "$man")"; sed -i 's/"version":"/"version":"forged /' "$man"
check 3 'interpreter\.manifest' input "^integrity_hole table=artifacts index=1 field=interpreter\.manifest ref=$iref$"

fresh; what="invocation journal"
rec1=$(q "$D" "SELECT transition_ref FROM log_entries WHERE entry_index = 1")
q "$D" "UPDATE journal SET ref = '$ZERO' WHERE phase = 'outcome' AND status = 'committed' AND ref = '$rec1'"
check 1 journal input "^integrity_hole table=journal index=1 field=invocation ref=$rec1$"

fresh; what="effect journal"
q "$D" "UPDATE journal SET ref = '$ZERO' WHERE phase = 'intent' AND kind = 'effect' AND subject = 'cli:ep1:e1#e1'"
check 2 'effects\[0\]\.journal' effects "^integrity_hole table=journal index=2 field=effects\[0\] ref=$er2$"

fresh; what="log entry"
q "$D" "UPDATE log_entries SET written_by = 'mallory' WHERE entry_index = 5"
check 5 entry input "^integrity_hole table=log_entries index=5 field=writtenBy$"

fresh; what="an orphan object"
q "$D" "INSERT INTO objects(ref, semantic_id, provenance, payload, size, created_at) VALUES ('sha256:$(printf 'f%.0s' $(seq 64))', 'x/orphan', '', CAST('z' AS BLOB), 1, 0)"
run_capture out err rc "$W" scan --store "$D"
is "$rc.$out" "0." "$what: the walk of the log does not reach it (control)"
run_capture out err rc "$W" scan --store "$D" --objects
is "$rc" 7 "$what: scan --objects exits 7"
is "$out" "integrity_hole table=objects ref=sha256:$(printf 'f%.0s' $(seq 64)) field=payload" "$what: scan --objects reports it"
# ---- a consistent forgery: the walk cannot see it, replay can ----
mkdir "$T/forge"
"$top_builddir/tests/coordinator/prov-fixture" "$T/forge" --forge || bail "prov-fixture --forge"
FD=$T/forge/world.db
run_capture out err rc "$W" why --store "$FD" 7
is "$rc" 0 "a forged entry whose every hash is right walks clean (what a walk cannot prove)"
o7=$(recf "$FD" 7 output)
# (0-based offset of the f of "forged": the re-run has "phase" there)
off=$(q "$FD" "SELECT instr(CAST(payload AS TEXT), '\"forged\"') FROM objects WHERE ref = '$o7'")
run_capture out err rc "$W" replay --store "$FD" 7
is "$rc" 7 "replay of the forgery: exit 7"
like "$out" "^entry 7 cli:ep1:e1 diverged at stage finish, byte offset $off: " "... diverged at stage finish, at the forged member"

# ---- the progress line on a terminal ----
if command -v script >/dev/null; then
  run_capture out err rc script -qec "'$W' replay --store '$DB' --all >/dev/null" /dev/null
  like "$out" "replay: entry 6 of 6" "replay --all shows a progress line when stderr is a terminal"
else
  skip "no script(1)" "replay --all shows a progress line on a terminal"
fi

# ---- through the daemon's read routes (worldd why --addr) ----
# (WORLDD_SERVE: another build's worldd to serve, while this one has no serve)
SW=${WORLDD_SERVE:-$W}
if "$SW" serve --help >/dev/null 2>&1; then
  mkdir "$T/srv"; cp -a "$DB" "$DB.artifacts" "$T/srv/"
  SDB=$T/srv/world.db
  "$SW" serve --store "$SDB" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 > "$T/srv/out" 2> "$T/srv/err" &
  spid=$!
  for i in $(seq 300); do grep -q '^worldd listening on ' "$T/srv/out" 2>/dev/null && break; sleep 0.1; done
  URL=$(sed -n 's/^worldd listening on //p' "$T/srv/out")
  like "$URL" '^http://127\.0\.0\.1:[0-9]+$' "worldd serve listens on loopback"
  tok=$SDB.operator-token
  run_capture out err rc "$W" why --addr "$URL" --token-file "$tok" 2
  is "$rc" 0 "why --addr: exit 0 ($err)"
  like "$(printf '%s' "$out" | tail -1)" "^all 11 link\(s\) verified, 4 not reachable through daemon $URL$" "why --addr: verified, the journal and archive links not reachable"
  like "$out" "^- journal " "... the journal link listed as not reachable"
  run_capture out err rc "$W" why --addr "$URL" --token-file "$tok" cli:ep1:d1
  like "$out" "^entry 4 cli:ep1:d1 " "why --addr by invocation id"
  run_capture out err rc sh -c "'$W' why --addr '$URL' --token-file '$tok' - < '$T/result.json'"
  like "$(printf '%s' "$out" | tail -1)" "^all 12 link\(s\) verified" "why --addr - (a result on stdin)"
  run_capture out err rc "$W" why --addr "$URL" 2
  is "$rc" 22 "why --addr without a credential: exit 22"
  # POST /v1/replay/{index} answers what `worldd replay N --json` prints
  if command -v curl >/dev/null; then
    for i in 2 4 5; do
      body=$(curl -sS -m 60 -X POST -H "Authorization: Bearer $(cat "$tok")" "$URL/v1/replay/$i")
      cli=$("$W" replay --store "$DB" "$i" --json)
      is "$(printf '%s' "$body" | "$W" json canon)" "$(printf '%s' "$cli" | "$W" json canon)" "POST /v1/replay/$i answers the same as worldd replay $i --json"
    done
    splan=$(recf "$SDB" 2 plan)
    q "$SDB" "UPDATE objects SET payload = CAST(replace(CAST(payload AS TEXT), '\"n\":7', '\"n\":8') AS BLOB) WHERE ref = '$splan'"
    body=$(curl -sS -m 60 -X POST -H "Authorization: Bearer $(cat "$tok")" "$URL/v1/replay/2")
    cli=$("$W" replay --store "$SDB" 2 --json)
    like "$body" '"diverged":true' "POST /v1/replay of a tampered plan reports the divergence"
    is "$(printf '%s' "$body" | "$W" json canon)" "$(printf '%s' "$cli" | "$W" json canon)" "... the same report as the CLI (stage plan, offset)"
    code=$(curl -sS -m 30 -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $(cat "$tok")" "$URL/v1/replay/99")
    is "$code" 404 "POST /v1/replay/99: 404"
    code=$(curl -sS -m 30 -o /dev/null -w '%{http_code}' -X POST "$URL/v1/replay/2")
    is "$code" 401 "POST /v1/replay without a credential: 401"
    code=$(curl -sS -m 30 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$tok")" "$URL/v1/replay/2")
    is "$code" 405 "GET /v1/replay/2: 405"
  else
    for i in $(seq 8); do skip "no curl" "POST /v1/replay $i"; done
  fi
  kill -TERM "$spid"; wait "$spid"
  is "$?" 0 "the daemon stops cleanly"
else
  for i in $(seq 16); do skip "this build has no worldd serve" "why --addr $i"; done
fi

# ---- the quick start's packages through worldd call (docs/provenance.md) ----
PFIX=$top_builddir/tests/packages/packages-fixture
if [ -x "$PFIX" ]; then
  P=$T/pkg; ws=$P/ws; mkdir -p "$ws/ep1"
  cred=$("$PFIX" "$P" "$top_srcdir" ep1 "$top_srcdir/packages/se-tools/transitions.json" \
         Workspace.Read=worktree:100 Workspace.Write=worktree:100) || bail "packages-fixture (se-tools)"
  "$PFIX" "$P" "$top_srcdir" ep1 "$top_srcdir/packages/quickstart/transitions.json" Workspace.Read=worktree:100 >/dev/null ||
    bail "packages-fixture (quickstart)"
  PDB=$P/world.db
  "$W" call --store "$PDB" --session "$cred" --task hello tools.echo --json '{"message":"hello"}' > "$P/echo.json" 2>/dev/null
  ok $? "worldd call tools.echo"
  "$W" call --store "$PDB" --session "$cred" --workspace-root "$ws" --task w1 ailang-write \
    --json '{"path":"notes.txt","content":"hi\n"}' > "$P/write.json" 2>/dev/null
  ok $? "worldd call ailang-write (Workspace.Write into the worktree)"
  run_capture out err rc sh -c "'$W' why --store '$PDB' - < '$P/echo.json'"
  is "$rc.$(printf '%s' "$out" | tail -1)" "0.all 11 link(s) verified" "why of the tools.echo result: every link verified"
  run_capture out err rc sh -c "'$W' why --store '$PDB' - < '$P/write.json'"
  is "$rc.$(printf '%s' "$out" | tail -1)" "0.all 16 link(s) verified" "why of the ailang-write result: every link verified"
  wt_before=$(stat -c '%s %Y %i' "$ws/ep1/notes.txt"; sha "$ws/ep1/notes.txt"); ls_before=$(ls -la "$ws/ep1")
  pdb_sha=$(sha "$PDB")
  run_capture out err rc "$W" replay --store "$PDB" --all
  is "$rc.$(printf '%s' "$out" | tail -1)" "0.replayed 2, diverged 0" "both replay identical"
  is "$(stat -c '%s %Y %i' "$ws/ep1/notes.txt"; sha "$ws/ep1/notes.txt")" "$wt_before" "replay did not touch the worktree file"
  is "$(ls -la "$ws/ep1")" "$ls_before" "... nor the worktree"
  is "$(sha "$PDB")" "$pdb_sha" "... nor the store"
  rm "$ws/ep1/notes.txt"
  run_capture out err rc "$W" replay --store "$PDB" 2
  is "$rc" 0 "with the file gone the replay is still identical: the effect is answered from its record"
  ok "$([ ! -e "$ws/ep1/notes.txt" ]; echo $?)" "... and the file is not re-created"
else
  for i in $(seq 10); do skip "no packages-fixture" "quick start packages $i"; done
fi
done_testing
