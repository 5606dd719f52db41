#!/bin/bash
# The verifiable log end to end (issue 43; docs/provenance.md "A verifiable
# log", docs/daemon.md): worldd log key init refused under CI=true (nothing
# changed) and confirmed through a pseudo-terminal; the daemon signs a
# checkpoint per commit batch; each tools/call result's receipt
# (_meta world/invocation entry_index, leaf_hash) is the entry's leaf;
# GET /v1/log/checkpoint is public; inclusion proofs and leaves are scoped
# (a session proves its own entry, another episode's answers NotFound as an
# absent one does, the operator token proves all); consistency proofs are
# public; the HTTP answers are byte for byte the CLI's; world-verify (and
# Go's sumdb/note + sumdb/tlog when installed) verify the checkpoint and the
# proofs, refusing an edited checkpoint and a changed leaf; and the
# rewritten-history control: an entry changed in a copy of the store with
# its hash chain and tree recomputed and a checkpoint signed by the same key
# fails the consistency proof against the checkpoint taken before (the
# original passes the same check).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
command -v curl >/dev/null || { skip "curl not installed" "verifiable log"; done_testing; exit; }
[ -n "${SQLITE3_SHELL:-}" ] || { skip "no sqlite3 shell" "verifiable log"; done_testing; exit; }
PTY="$top_srcdir/tests/publish/pty.py"
V="$top_builddir/verify/world-verify"
daemon_setup
q() { "$SQLITE3_SHELL" "$DB" "$1"; }

# ---- the key: refused under CI, made through a terminal ----
env CI=true python3 "$PTY" --after '[y/N] ' --answer y --out "$T/o" --err "$T/e" --tty "$T/t" -- \
  "$WORLDD" log key init --store "$DB"
is "$?" 20 "log key init under CI=true: exit 20"
like "$(cat "$T/e")" "STOP fence=ci" "... the ci fence named"
run_capture out err rc "$WORLDD" log key --store "$DB"
is "$rc" 4 "... no key in the store afterwards (exit 4: $err)"
ok "$([ ! -e "$DB.log-key" ]; echo $?)" "... and no key file"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '[y/N] ' --answer y --out "$T/o" --err "$T/e" --tty "$T/t" -- \
  "$WORLDD" log key init --store "$DB"
is "$?" 0 "log key init confirmed at a terminal: exit 0 ($(cat "$T/e"))"
VKEY=$(cat "$T/o")
like "$VKEY" '^world/[0-9a-f]{32}\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+$' "it prints the verifier key NAME+HASH+BASE64"
is "$("$WORLDD" log key --store "$DB")" "$VKEY" "worldd log key prints the stored verifier key"
is "$(stat -c %a "$DB.log-key")" 600 "the signer key file is 0600"
ok "$(q "SELECT count(*) FROM log_key WHERE verifier LIKE 'PRIVATE%'")" "the store holds no private key"
printf '%s\n' "$VKEY" > "$T/vk"

# ---- --log-key FILE refusals: the start refused, nothing served ----
serve_once() { run_capture out err rc timeout 60 "$WORLDD" serve --store "$DB" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 "$@"; }
serve_once --log-key "$T/absent.key"
is "$rc" 4 "--log-key naming no file: the start refused, exit 4 ($(printf '%s' "$err" | tail -n1))"
cp "$DB.log-key" "$T/wide.key"; chmod 644 "$T/wide.key"
serve_once --log-key "$T/wide.key"
is "$rc" 3 "--log-key 0644: refused, exit 3 ($(printf '%s' "$err" | tail -n1))"
TOOL="$top_builddir/tests/tlog/tlog_tool"
if [ -x "$TOOL" ] && "$TOOL" keygen "${VKEY%%+*}" "$T/other.key" "$T/other.vk" >/dev/null 2>&1; then
  chmod 600 "$T/other.key"
  serve_once --log-key "$T/other.key"
  is "$rc" 8 "--log-key of another key (same name): refused, exit 8 ($(printf '%s' "$err" | tail -n1))"
else
  skip "tests/tlog/tlog_tool not built" "--log-key of another key refused"
fi

# ---- the daemon signs; receipts ----
daemon_start || bail "daemon did not start"
grep -q "log checkpoints signed in each commit batch by $VKEY" "$T/err"; ok $? "start-up line names the signing key"
TOKEN=$(cat "$DB.operator-token")
call() { # CRED ID MESSAGE
  mcp "$1" "{\"jsonrpc\":\"2.0\",\"id\":$2,\"method\":\"tools/call\",\"params\":{\"name\":\"tools_decho\",\"arguments\":{\"message\":\"$3\"}}}"
}
call "$CRED" 1 a1; RA1=$(sse_json); is "$STATUS" 200 "A's first call"
call "$CRED_GRANT" 2 b1; RB1=$(sse_json); is "$STATUS" 200 "B's call"
call "$CRED" 3 a2; RA2=$(sse_json); is "$STATUS" 200 "A's second call"
EA1=$(printf '%s' "$RA1" | jget result._meta.world/invocation.entry_index)
EB1=$(printf '%s' "$RB1" | jget result._meta.world/invocation.entry_index)
EA2=$(printf '%s' "$RA2" | jget result._meta.world/invocation.entry_index)
LA1=$(printf '%s' "$RA1" | jget result._meta.world/invocation.leaf_hash)
is "$EA1 $EB1 $EA2" "1 2 3" "the receipts' entry indexes"
"$WORLDD" log get --store "$DB" 1 --leaf > "$T/leaf1"
want=$(python3 -c 'import hashlib,base64,sys; print(base64.b64encode(hashlib.sha256(b"\0"+open(sys.argv[1],"rb").read()).digest()).decode())' "$T/leaf1")
is "$LA1" "$want" "the receipt's leaf_hash is SHA-256(0x00 || worldd log get 1 --leaf)"
is "$(tail -c 1 "$T/leaf1" | od -An -c | tr -d ' ')" "}" "--leaf prints no trailing newline"

# ---- the checkpoint: public, the CLI's bytes ----
http GET /v1/log/checkpoint
is "$STATUS" 200 "GET /v1/log/checkpoint without a credential: 200"
like "$CTYPE" "^text/plain" "... text/plain"
cp "$T/body" "$T/cp3"
"$WORLDD" log checkpoint --store "$DB" > "$T/cp3cli"
cmp -s "$T/cp3" "$T/cp3cli"; ok $? "... byte for byte worldd log checkpoint"
is "$(sed -n 2p "$T/cp3")" 3 "... of tree size 3 (signed in the batches)"
run_capture out err rc "$V" checkpoint --key "$T/vk" "$T/cp3"
is "$rc" 0 "world-verify checkpoint: verified ($err)"
sed '3s/^./A/' "$T/cp3" > "$T/cp3x"; [ "$(sed -n 3p "$T/cp3")" = "$(sed -n 3p "$T/cp3x")" ] && sed -i '3s/^./B/' "$T/cp3x"
run_capture out err rc "$V" checkpoint --key "$T/vk" "$T/cp3x"
is "$rc" 7 "control: an edited checkpoint is refused (exit 7)"

# ---- inclusion: scoped ----
http GET "/v1/log/proof/inclusion?index=1&size=3" -H "$(auth "$CRED")"
is "$STATUS" 200 "session A proves its own entry 1"
cp "$T/body" "$T/p1"
"$WORLDD" log prove --store "$DB" --index 1 --size 3 > "$T/p1cli"
cmp -s "$T/p1" "$T/p1cli"; ok $? "... byte for byte worldd log prove --index 1 --size 3"
run_capture out err rc "$V" inclusion --key "$T/vk" --checkpoint "$T/cp3" --index 1 --leaf "$T/leaf1" --proof "$T/p1"
is "$rc" 0 "world-verify inclusion of entry 1 in the checkpoint ($err)"
printf '%s' "$(sed 's/"writtenBy":"w/"writtenBy":"W/' "$T/leaf1")" > "$T/leaf1x"
cmp -s "$T/leaf1" "$T/leaf1x"; is "$?" 1 "(the changed leaf differs in one byte)"
run_capture out err rc "$V" inclusion --key "$T/vk" --checkpoint "$T/cp3" --index 1 --leaf "$T/leaf1x" --proof "$T/p1"
is "$rc" 7 "control: a changed leaf is refused" 
run_capture out err rc "$V" inclusion --key "$T/vk" --checkpoint "$T/cp3" --index 2 --leaf "$T/leaf1" --proof "$T/p1"
is "$rc" 7 "control: a wrong index is refused"
http GET "/v1/log/proof/inclusion?index=2&size=3" -H "$(auth "$CRED")"
B2="$STATUS $BODY"
http GET "/v1/log/proof/inclusion?index=9&size=3" -H "$(auth "$CRED")"
is "$B2" "404 $(printf '%s' "$BODY" | sed 's/entry 9/entry 2/')" "another episode's entry answers NotFound, as an absent entry does"
like "$B2" "NotFound" "... NotFound"
http GET "/v1/log/proof/inclusion?index=2&size=3" -H "$(auth "$CRED_GRANT")"
is "$STATUS" 200 "session B proves its own entry 2"
http GET "/v1/log/proof/inclusion?index=2&size=3" -H "$(auth "$TOKEN")"
is "$STATUS" 200 "the operator token proves any entry"
http GET "/v1/log/proof/inclusion?index=1&size=3"
is "$STATUS" 401 "without a credential inclusion proofs answer 401"
http GET "/v1/log/leaf/1" -H "$(auth "$CRED")"
is "$STATUS" 200 "session A reads its leaf"
cmp -s "$T/body" "$T/leaf1"; ok $? "... byte for byte worldd log get 1 --leaf"
http GET "/v1/log/leaf/2" -H "$(auth "$CRED")"
is "$STATUS" 404 "another episode's leaf: NotFound"

# ---- consistency: public ----
"$WORLDD" log checkpoint --store "$DB" > "$T/cpold"
call "$CRED" 4 a3; is "$STATUS" 200 "A's third call"
http GET /v1/log/checkpoint; cp "$T/body" "$T/cp4"
is "$(sed -n 2p "$T/cp4")" 4 "the next checkpoint is of size 4"
http GET "/v1/log/proof/consistency?from=3&to=4"
is "$STATUS" 200 "consistency proof 3 -> 4 without a credential: 200"
cp "$T/body" "$T/c34"
"$WORLDD" log prove --store "$DB" --from 3 --to 4 > "$T/c34cli"
cmp -s "$T/c34" "$T/c34cli"; ok $? "... byte for byte worldd log prove --from 3 --to 4"
run_capture out err rc "$V" consistency --key "$T/vk" --old "$T/cpold" --new "$T/cp4" --proof "$T/c34"
is "$rc" 0 "world-verify consistency 3 -> 4 ($err)"
http GET "/v1/log/proof/consistency?from=3&to=9"
is "$STATUS" 404 "a size past the tree: NotFound"

# ---- Go's sumdb/note and sumdb/tlog, when installed ----
GOPATH_DIR=/usr/share/gocode
if [ -n "${GO:-}" ] && [ -x "$GO" ] && [ -d "$GOPATH_DIR/src/golang.org/x/mod/sumdb/tlog" ]; then
  ( cd "$T" && GOPATH=$GOPATH_DIR GO111MODULE=off GOFLAGS= GOPROXY=off GOCACHE="$T/gocache" \
      "$GO" build -o "$T/goverify" "$top_srcdir/tests/tlog/go/verify.go" ) > "$T/gobuild" 2>&1
  ok $? "Go's verifier builds" || sed 's/^/# /' "$T/gobuild"
  is "$("$T/goverify" checkpoint "$T/vk" "$T/cp4" 2>&1 | cut -d' ' -f1)" 4 "Go's note.Open verifies the daemon's checkpoint"
  "$WORLDD" log get --store "$DB" 4 --leaf > "$T/leaf4"
  "$WORLDD" log prove --store "$DB" --index 4 --size 4 > "$T/p44"
  "$T/goverify" inclusion "$T/vk" "$T/cp4" 4 "$T/leaf4" "$T/p44" > "$T/go.out" 2>&1
  ok $? "Go's tlog.CheckRecord verifies entry 4's inclusion ($(cat "$T/go.out"))"
  "$T/goverify" consistency "$T/vk" "$T/cpold" "$T/cp4" "$T/c34" > "$T/go.out" 2>&1
  ok $? "Go's tlog.CheckTree verifies 3 -> 4 ($(cat "$T/go.out"))"
  "$T/goverify" inclusion "$T/vk" "$T/cp4" 4 "$T/leaf1" "$T/p44" > /dev/null 2>&1
  is "$?" 1 "control: Go refuses another entry's leaf"
else
  for i in 1 2 3 4 5; do skip "go or golang-golang-x-mod-dev not installed" "Go's sumdb verifies the daemon's log"; done
fi
# ---- A2A: the same receipt in the task's metadata ----
a2a() { local c=$1 j=$2; shift 2; http POST /a2a/ -H "$(auth "$c")" -H 'Content-Type: application/json' --data-binary "$j" "$@"; }
a2a "$CRED" '{"jsonrpc":"2.0","id":9,"method":"tasks/send","params":{"id":"task-lt","message":{"role":"user","parts":[{"type":"data","data":{"message":"a2a"}}]},"metadata":{"skill_id":"tools.echo"}}}'
is "$STATUS" 200 "A2A tasks/send committed"
E5=$(printf '%s' "$BODY" | jget result.metadata.entry_index)
L5=$(printf '%s' "$BODY" | jget result.metadata.leaf_hash)
"$WORLDD" log get --store "$DB" "$E5" --leaf > "$T/leaf5"
want=$(python3 -c 'import hashlib,base64,sys; print(base64.b64encode(hashlib.sha256(b"\0"+open(sys.argv[1],"rb").read()).digest()).decode())' "$T/leaf5")
is "$E5:$L5" "5:$want" "its metadata's receipt: entry 5 and its leaf hash"

# ---- two daemons on one store, calls to both at once: one tree ----
"$WORLDD" serve --store "$DB" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 > "$T/out2" 2> "$T/err2" &
D2=$!
URL2=""
for _ in $(seq 1 300); do URL2=$(sed -n 's/^worldd listening on //p' "$T/out2"); [ -n "$URL2" ] && break; sleep 0.1; done
ok "$([ -n "$URL2" ]; echo $?)" "a second daemon serves the same store"
grep -q "log checkpoints signed in each commit batch by $VKEY" "$T/err2"; ok $? "... and signs with the same key"
pids=()
for i in $(seq 1 8); do
  u=$URL; [ $((i % 2)) = 0 ] && u=$URL2
  curl -sS -m 60 -o "$T/par.$i" -w '%{http_code}' -X POST "$u/mcp/" -H "$(auth "$CRED")" "${MCP_HDRS[@]}" \
    --data-binary "{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"tools/call\",\"params\":{\"name\":\"tools_decho\",\"arguments\":{\"message\":\"p$i\"}}}" \
    > "$T/code.$i" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
is "$(cat "$T"/code.* | tr -d '\n')" "200200200200200200200200" "eight calls to the two daemons at once: all committed"
kill -TERM "$D2"; wait "$D2"; is "$?" 0 "the second daemon stopped cleanly"
N=$(q 'SELECT count(*) FROM log_entries')
is "$N" 13 "13 entries in the log"
"$WORLDD" log checkpoint --store "$DB" > "$T/cpN"
run_capture out err rc "$V" checkpoint --key "$T/vk" "$T/cpN"
is "$rc:$(sed -n 2p "$T/cpN")" "0:$N" "the latest checkpoint is of the whole log, verified ($err)"
"$WORLDD" log prove --store "$DB" --from 4 --to "$N" > "$T/c4N"
run_capture out err rc "$V" consistency --key "$T/vk" --old "$T/cp4" --new "$T/cpN" --proof "$T/c4N"
is "$rc" 0 "the log both daemons appended to extends the checkpoint of size 4 ($err)"
daemon_stop
is "$DRC" 0 "daemon stopped cleanly"
run_capture out err rc "$WORLDD" scan --store "$DB"
is "$rc" 0 "the scan recomputes the tree: clean ($out)"

# ---- the rewritten history ----
cp "$DB" "$T/copy.db"; chmod 600 "$T/copy.db"
python3 - "$T/copy.db" <<'EOF'
import hashlib, json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT entry_index, entry_json FROM log_entries ORDER BY entry_index").fetchall()
prev = None
for idx, js in rows:
    e = json.loads(bytes(js))
    if idx == 2: e["writtenBy"] = "a forger"
    if idx > 1: e["prevEntryHash"] = prev
    e.pop("entryHash")
    h = "sha256:" + hashlib.sha256(json.dumps(e, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    e["entryHash"] = h
    out = json.dumps(e, sort_keys=True, separators=(",", ":")).encode()
    db.execute("UPDATE log_entries SET entry_hash=?, prev_entry_hash=?, written_by=?, entry_json=? WHERE entry_index=?",
               (h, e["prevEntryHash"], e["writtenBy"], out, idx))
    db.execute("UPDATE worlds SET log_head=? WHERE revision=?", (h, idx))
    prev = h
db.commit()
EOF
ok $? "a copy's entry 2 rewritten, the chain recomputed"
KEYROW=$("$SQLITE3_SHELL" "$T/copy.db" "SELECT verifier FROM log_key")
"$SQLITE3_SHELL" "$T/copy.db" "DROP TABLE log_tree; DROP TABLE log_key; DROP TABLE log_checkpoint; PRAGMA user_version=2;"
# a writer rebuilds the tree over the rewritten entries (the schema-3 migration), then the same key signs
"$WORLDD" log checkpoint --store "$T/copy.db" --sign --log-key "$DB.log-key" > /dev/null 2>&1
"$SQLITE3_SHELL" "$T/copy.db" "INSERT INTO log_key(id, verifier, set_at) VALUES (1, '$KEYROW', 0)"
"$WORLDD" log checkpoint --store "$T/copy.db" --sign --log-key "$DB.log-key" > "$T/cpforged" 2> "$T/e"
is "$?" 0 "the copy's rebuilt tree signed by the same key ($(cat "$T/e"))"
run_capture out err rc "$V" checkpoint --key "$T/vk" "$T/cpforged"
is "$rc" 0 "... its checkpoint verifies on its own (the signature is the operator's)"
"$WORLDD" log prove --store "$T/copy.db" --from 3 --to 4 > "$T/cforged"
run_capture out err rc "$V" consistency --key "$T/vk" --old "$T/cpold" --new "$T/cpforged" --proof "$T/cforged"
is "$rc" 7 "the rewritten history fails the consistency proof against the checkpoint taken before ($err)"
run_capture out err rc "$V" consistency --key "$T/vk" --old "$T/cpold" --new "$T/cp4" --proof "$T/c34"
is "$rc" 0 "control: the original history passes the same check"
done_testing
