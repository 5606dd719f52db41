#!/bin/bash
# worldd store verbs end to end: json canon, hash, object put/get, log
# append/get, scan, archive; bad input changes nothing; a second writer is
# refused; a row corrupted with the sqlite3 shell is an integrity_hole and
# reads of it fail loudly; a future user_version is refused byte-identical.
. "$top_srcdir/tests/tap.sh"
T=$(mktemp -d /tmp/world-cli-store.XXXXXX)
trap 'rm -rf "$T"' EXIT
DB=$T/world.db
W=$WORLDD

# every store verb documents its flags and exit codes
for v in "json canon" "hash" "object put" "object get" "log get" "log append" "world head" "scan" "archive"; do
  run_capture out err rc $W $v --help
  if [ "$rc" = 0 ] && printf '%s' "$out" | grep -q '^usage: worldd '"$v" && printf '%s' "$out" | grep -q '^exit codes: 0 ok'; then
    ok 0 "worldd $v --help lists usage and exit codes"
  else
    ok 1 "worldd $v --help lists usage and exit codes"
  fi
done
run_capture out err rc "$W" --help
like "$out" "object put" "worldd --help lists the store verbs"
run_capture out err rc "$W" scan --store "$DB" --rows 0
is "$rc" 2 "scan --rows 0 is a usage error"
run_capture out err rc "$W" scan --store "$T/absent.db"
is "$rc" 4 "scan of a missing store: exit 4"
run_capture out err rc "$W" object get --store "$DB" --bogus x
is "$rc" 2 "unknown flag: exit 2"
like "$err" "^worldd object get: usage: unknown flag '--bogus'" "unknown flag named"

# json canon / hash
run_capture out err rc sh -c "printf '%s' '{\"b\":1.50,\"a\":[1e2,-0,0.000,1E-2]}' | '$W' json canon"
is "$rc" 0 "json canon exits 0"
is "$out" '{"a":[100,0,0,0.01],"b":1.5}' "json canon output"
run_capture out err rc sh -c "printf '%s' '{\"a\":1, \"a\":2}' | '$W' json canon"
is "$rc" 3 "duplicate key: exit 3"
is "$err" 'worldd json canon: canonical JSON: byte 8: duplicate key "a"' "error names the byte offset"
run_capture out err rc sh -c "printf '{} x' | '$W' json canon"
is "$rc" 3 "trailing data: exit 3"
like "$err" "byte 3: trailing data" "trailing data offset"
run_capture out err rc sh -c "printf 'hello' | '$W' hash"
is "$out" "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" "hash of hello"

# objects
run_capture ref err rc sh -c "printf '{ \"x\" : 1 }' | '$W' object put --store '$DB' --semantic-id world/invocation-output/v1 --provenance test"
is "$rc" 0 "object put exits 0"
is "$ref" "$(printf '{"x":1}' | "$W" hash)" "ref is the hash of the canonical payload"
run_capture out err rc "$W" object get --store "$DB" "$ref" --payload
is "$out" '{"x":1}' "object get --payload"
run_capture out err rc "$W" object get --store "$DB" "$ref"
is "$out" "{\"provenance\":\"test\",\"ref\":\"$ref\",\"semanticId\":\"world/invocation-output/v1\",\"size\":7}" "object get labels"
run_capture src err rc sh -c "printf 'module m  \r\nfunc f() -> int { 1 }\r\n\r\n' | '$W' object put --store '$DB' --semantic-id world/transition-source/v1"
run_capture out err rc "$W" object get --store "$DB" "$src" --payload
is "$out" "$(printf 'module m\nfunc f() -> int { 1 }')" "transition source canonicalised on put"

"$W" scan --store "$DB" >/dev/null   # settle the WAL so sizes compare
before=$("$SQLITE3_SHELL" "$DB" "SELECT count(*) FROM objects")
run_capture out err rc sh -c "printf '{\"x\":01}' | '$W' object put --store '$DB' --semantic-id world/invocation-input/v1"
is "$rc" 3 "bad JSON object put: exit 3"
like "$err" "^worldd object put: canonical JSON: byte 5: number with a leading zero$" "one-line error with offset"
run_capture out err rc "$W" object get --store "$DB" "sha256:ABCDEF"
is "$rc" 3 "bad ref: exit 3"
like "$err" "REF \"sha256:ABCDEF\"" "bad ref named"
run_capture out err rc "$W" object get --store "$DB" "sha256:0000000000000000000000000000000000000000000000000000000000000000"
is "$rc" 4 "absent object: exit 4"
run_capture out err rc "$W" object put --store "$DB" --semantic-id "bad id" < /dev/null
is "$rc" 3 "bad semantic id: exit 3"
is "$("$SQLITE3_SHELL" "$DB" "SELECT count(*) FROM objects")" "$before" "bad input wrote no object"

# log: an entry names an invocation record agreeing with its header
interp=$("$W" archive --store "$DB" --ailang-bin "$AILANG_LITE" | cut -d' ' -f1)
input=$(printf '{}' | "$W" object put --store "$DB" --semantic-id world/invocation-input/v1)
rec=$(printf '{"episodeId":"e","input":"%s","interpreter":"%s","invocationId":"cli:e:t","output":"%s","semanticsEpoch":1,"skillId":"s","transitionFn":"%s"}' \
  "$input" "$interp" "$ref" "$src" | "$W" object put --store "$DB" --semantic-id world/invocation-record/v1)
run_capture out err rc "$W" log append --store "$DB" --transition-ref "$ref" --state-root "$ref" --transition-fn "$src" --interpreter "$interp"
is "$rc" 3 "log append of a transitionRef that is no invocation record: exit 3"
like "$err" "transitionRef $ref is a world/invocation-output/v1, not an invocation record" "... named"
run_capture out err rc "$W" log append --store "$DB" --transition-ref "$rec" --state-root "$ref" --transition-fn "$src" --interpreter "$interp" --epoch 2
is "$rc" 3 "log append whose header disagrees with the record: exit 3"
like "$err" "names semanticsEpoch 1, the entry 2" "... named"
run_capture out err rc "$W" log append --store "$DB" --transition-ref "$rec" --state-root "$input" --transition-fn "$src" --interpreter "$interp"
is "$rc" 3 "log append whose stateRoot is not the record's output: exit 3"
run_capture out err rc "$W" log append --store "$DB" --transition-ref "$rec" --state-root "$ref" --transition-fn "$src" --interpreter "$interp"
is "$rc" 0 "log append 1"
like "$out" "^entry 1 sha256:[0-9a-f]{64} world sha256:[0-9a-f]{64}$" "log append prints entry and world"
for i in 2 3 4 5; do "$W" log append --store "$DB" --transition-ref "$rec" --state-root "$ref" --transition-fn "$src" --interpreter "$interp" >/dev/null; done
run_capture out err rc "$W" log append --store "$DB" --transition-ref "$rec" --state-root "$ref" --transition-fn "$src" --interpreter "$interp" --index 9
is "$rc" 8 "index gap refused with exit 8"
like "$err" "entryIndex 9 does not follow the log head 5" "gap named"
run_capture out err rc "$W" log append --store "$DB" --transition-ref "$rec" --state-root "$ref" --transition-fn "$src" --interpreter "$interp" --prev "$ref"
is "$rc" 8 "wrong prevEntryHash refused with exit 8"
run_capture out err rc "$W" log append --store "$DB" --transition-ref "$rec" --state-root "$ref" --transition-fn "$src" --interpreter "$interp" --expect-world "$ref"
is "$rc" 8 "stale head refused with exit 8"
is "$("$SQLITE3_SHELL" "$DB" "SELECT count(*) FROM log_entries")" 5 "refused appends wrote nothing"
run_capture out err rc "$W" log get --store "$DB" 3
is "$rc" 0 "log get 3"
like "$out" '^\{"entryHash":"sha256:[0-9a-f]{64}","entryIndex":3,' "log get prints the canonical entry"
run_capture out err rc "$W" scan --store "$DB"
is "$rc" 0 "clean scan exits 0"
is "$out$err" "" "clean complete scan prints nothing"
run_capture out err rc "$W" scan --store "$DB" --rows 4
like "$out" "^integrity_scan_incomplete log_rows=4 world_rows=0 holes=0 resume_log_index=5 resume_world_ref=sha256:0{64}$" "budgeted scan prints its cursors"
run_capture out err rc "$W" scan --store "$DB" --rows 4 --resume-log-index 5 --resume-world-ref "sha256:$(printf '0%.0s' $(seq 64))"
like "$out" "^integrity_scan_incomplete log_rows=1 world_rows=3 holes=0 resume_log_index=6 resume_world_ref=sha256:[0-9a-f]{64}$" "resumed scan continues"
run_capture out err rc "$W" scan --store "$DB" --resume-world-ref "sha256:XYZ"
is "$rc" 3 "bad resume cursor: exit 3"

# archive
run_capture out err rc "$W" archive --store "$DB" --ailang-bin "$AILANG_LITE"
is "$rc" 0 "archive exits 0"
iref=$("$W" hash < "$AILANG_LITE")
like "$out" "^$iref AILANG" "archive prints the ref and release string"
is "$(stat -c %a "$DB.artifacts/interpreters/sha256/${iref#sha256:}/ailang")" 555 "archived binary mode 0555"
run_capture out2 err rc "$W" archive --store "$DB" --ailang-bin "$AILANG_LITE"
is "$out2" "$out" "re-archive prints the same"

# hold_write DB SECONDS: another writer's transaction (the sqlite3 shell's
# BEGIN IMMEDIATE) held SECONDS; returns once it is held ($holder = its pid)
hold_write() {
  rm -f "$1.held"
  ( printf 'BEGIN IMMEDIATE;\n.shell touch %s.held\n' "$1"; sleep "$2"; printf 'ROLLBACK;\n' ) | "$SQLITE3_SHELL" "$1" >/dev/null 2>&1 &
  holder=$!
  for _ in $(seq 1 200); do [ -e "$1.held" ] && break; sleep 0.05; done
  rm -f "$1.held"
}
# a second writer: waits for another writer's transaction up to --wait-lock
hold_write "$DB" 3
run_capture out err rc sh -c "printf '{\"waits\":1}' | '$W' object put --store '$DB' --semantic-id world/invocation-input/v1 --wait-lock 0.2"
is "$rc" 5 "a write behind another writer's transaction longer than --wait-lock: exit 5"
like "$err" "^worldd object put: store $DB: .*database is locked$" "one line naming the store"
run_capture out err rc "$W" log get --store "$DB" 1
is "$rc" 0 "reads work while another writer's transaction is open"
run_capture out err rc sh -c "printf '{\"second\":1}' | '$W' object put --store '$DB' --semantic-id world/invocation-input/v1"
is "$rc" 0 "with the default busy timeout (5 s) the write waits for it, then commits"
wait "$holder"

# corruption with the sqlite3 shell
if [ -n "$SQLITE3_SHELL" ]; then
  "$SQLITE3_SHELL" "$DB" "UPDATE log_entries SET written_by = 'mallory' WHERE entry_index = 2"
  run_capture out err rc "$W" scan --store "$DB"
  is "$rc" 7 "scan of a corrupted store exits 7"
  is "$out" "integrity_hole table=log_entries index=2 field=writtenBy" "corrupted row reported as integrity_hole"
  run_capture out err rc "$W" log get --store "$DB" 2
  is "$rc" 7 "read of the corrupted entry fails with exit 7"
  like "$err" "log entry 2: integrity hole in field writtenBy" "read names the hole"
  run_capture out err rc "$W" log get --store "$DB" 2
  is "$rc" 7 "and keeps failing"
  "$SQLITE3_SHELL" "$DB" "UPDATE log_entries SET written_by = 'worldd log append' WHERE entry_index = 2"
  # a world row and an object payload
  wref=$("$SQLITE3_SHELL" "$DB" "SELECT ref FROM worlds WHERE revision = 4")
  "$SQLITE3_SHELL" "$DB" "UPDATE worlds SET payload = replace(payload, '\"revision\":4', '\"revision\":7') WHERE revision = 4"
  run_capture out err rc "$W" scan --store "$DB"
  is "$out" "integrity_hole table=worlds ref=$wref field=revision" "corrupted world reported"
  "$SQLITE3_SHELL" "$DB" "UPDATE objects SET payload = CAST('{\"x\":2}' AS BLOB) WHERE ref = '$ref'"
  "$SQLITE3_SHELL" "$DB" "UPDATE objects SET payload = CAST('{\"r\":2}' AS BLOB) WHERE ref = '$rec'"
  run_capture out err rc "$W" object get --store "$DB" "$ref"
  is "$rc" 7 "read of a corrupted object fails with exit 7"
  like "$err" "object $ref: integrity hole: stored payload hashes to sha256:" "object read names the hole"
  run_capture out err rc "$W" scan --store "$DB"
  like "$out" "integrity_hole table=log_entries index=1 field=transitionRef" "scan recomputes the record payload hash"
  like "$out" "table=worlds ref=sha256:[0-9a-f]{64} field=stateRoot" "scan recomputes the state root payload hash"
  is "$("$SQLITE3_SHELL" "$DB" "SELECT count(*) FROM log_entries")" 5 "history is not rewritten"
  "$SQLITE3_SHELL" "$DB" "DELETE FROM log_entries WHERE entry_index = 3"
  run_capture out err rc "$W" scan --store "$DB"
  like "$out" "integrity_hole table=log_entries index=4 field=entryIndex" "a deleted entry shows as a gap"

  # future schema version: refused and byte-identical
  F=$T/future.db
  printf '{}' | "$W" object put --store "$F" --semantic-id world/invocation-input/v1 >/dev/null
  "$SQLITE3_SHELL" "$F" "PRAGMA journal_mode=DELETE; PRAGMA user_version=7;" >/dev/null
  h1=$(sha256sum "$F" | cut -d' ' -f1)
  run_capture out err rc sh -c "printf '{}' | '$W' object put --store '$F' --semantic-id world/invocation-input/v1"
  is "$rc" 6 "future user_version refused with exit 6"
  like "$err" "schema version 7 is unknown to this build \(knows 1 to 3\); store left untouched" "message names the version"
  run_capture out err rc "$W" scan --store "$F"
  is "$rc" 6 "scan refuses it too"
  is "$(sha256sum "$F" | cut -d' ' -f1)" "$h1" "store left byte-identical"
else
  for i in $(seq 16); do skip "no sqlite3 shell" "corruption/schema check $i"; done
fi
done_testing
