#!/bin/bash
# The operator's conventions of every worldd verb (issue 12): read verbs on a
# store they may not write (read-only directory, another user's store)
# create nothing beside it; a file that is not a store has its own exit code
# (24) and no lock file is left beside it; output lost to a full disk is
# exit 9; archive takes interpreters only and leaves nothing on a refusal;
# flags (--flag=value, repeated flags, - for stdin, --json, --wait-lock,
# --version); \u0000 the same in json canon and run. Each with a control.
. "$top_srcdir/tests/tap.sh"
T=$(mktemp -d /tmp/world-cli-ops.XXXXXX)
cleanup() { chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
W=$WORLDD
FIX="$top_builddir/tests/capsule/fixture"   # a static ELF; --version is no release line

# a store with one log entry and one world
mkstore() { # DB: prints the output object's ref
  local r s i in rec
  r=$(printf '{"x":1}' | "$W" object put --store "$1" --semantic-id world/invocation-output/v1) || return 1
  s=$(printf 'module m\n' | "$W" object put --store "$1" --semantic-id world/transition-source/v1) || return 1
  i=$("$W" archive --store "$1" --ailang-bin "$AILANG_LITE" | cut -d' ' -f1) || return 1
  in=$(printf '{}' | "$W" object put --store "$1" --semantic-id world/invocation-input/v1) || return 1
  rec=$(printf '{"episodeId":"e","input":"%s","interpreter":"%s","invocationId":"cli:e:t","output":"%s","semanticsEpoch":1,"skillId":"s","transitionFn":"%s"}' \
    "$in" "$i" "$r" "$s" | "$W" object put --store "$1" --semantic-id world/invocation-record/v1) || return 1
  "$W" log append --store "$1" --transition-ref "$rec" --state-root "$r" --transition-fn "$s" --interpreter "$i" >/dev/null || return 1
  echo "$r"
}
listing() { (cd "$1" && ls -A | sort | tr '\n' ' '); }

# ---- 2. read-only audits --------------------------------------------------
mkdir "$T/ro"
REF=$(mkstore "$T/ro/w.db") || bail "cannot make a store"
[ ! -e "$T/ro/w.db-wal" ] || bail "the writer left a -wal file"
chmod 0555 "$T/ro"
before=$(listing "$T/ro")
reads=("scan --store $T/ro/w.db" "object get --store $T/ro/w.db $REF" "log get --store $T/ro/w.db 1"
       "world head --store $T/ro/w.db" "session list --store $T/ro/w.db" "journal --store $T/ro/w.db --indeterminate")
for v in "${reads[@]}"; do
  # shellcheck disable=SC2086
  run_capture out err rc "$W" $v
  is "$rc" 0 "read-only directory: worldd ${v%% --*} works ($err)"
done
is "$(listing "$T/ro")" "$before" "no lock, -wal or -shm file was created beside the store"
if [ -n "$SQLITE3_SHELL" ]; then
  # control: a plain read-only SQLite open of the same WAL store (what the
  # verbs did before) creates the -wal/-shm files in that directory
  cp -a "$T/ro" "$T/ro-control"
  "$SQLITE3_SHELL" -readonly "$T/ro-control/w.db" "SELECT count(*) FROM objects" >/dev/null 2>&1
  unlike "$(listing "$T/ro-control")" "^w.db $" "control: a plain read-only open creates files there ($(listing "$T/ro-control"))"
else
  skip "no sqlite3 shell" "control: a plain read-only open creates files there"
fi

# the unprivileged path: a store of root, read by uid 65534 (who cannot
# write to the directory at all)
chmod 0755 "$T" "$T/ro"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
  chmod 0755 "$T/ro"
  # a store is made its owner's only (0600, docs/store.md "File modes"):
  # uid 65534 cannot read it until the owner shares it
  run_capture out err rc nobody "$W" scan --store "$T/ro/w.db"
  nok "$rc" "another user cannot read a store as made (0600: $err)"
  chmod -R a+rX "$T/ro"
  before=$(listing "$T/ro")
  for v in "${reads[@]}"; do
    # shellcheck disable=SC2086
    run_capture out err rc nobody "$W" $v
    is "$rc" 0 "another user's store: worldd ${v%% --*} works as uid 65534 ($err)"
  done
  is "$(listing "$T/ro")" "$before" "... and creates nothing there"
  run_capture out err rc nobody "$W" world head --store "$T/ro/w.db" --json
  like "$out" '^\{"ref":"sha256:[0-9a-f]{64}","world":\{"logHead"' "world head --json as uid 65534"
  # control: the same user cannot write there (so a file would have failed)
  run_capture out err rc sh -c "printf '{}' | setpriv --reuid=65534 --regid=65534 --clear-groups '$W' object put --store '$T/ro/w.db' --semantic-id world/x/v1"
  nok "$rc" "control: uid 65534 cannot open the store as a writer ($err)"
  is "$(listing "$T/ro")" "$before" "... and that refusal left nothing either"
else
  for i in 1 2 3 4 5 6 7 8 9 10 11; do skip "not root or no setpriv" "another user's store read as uid 65534"; done
fi

# a file that is not a SQLite store
printf 'just some text, not a database at all, long enough for a header\n' > "$T/text.db"
for v in "scan" "world head" "log get" ; do
  arg=""; [ "$v" = "log get" ] && arg=1
  # shellcheck disable=SC2086
  run_capture out err rc "$W" $v --store "$T/text.db" $arg
  is "$rc" 24 "worldd $v on a text file: exit 24 (not a SQLite store)"
done
like "$err" "^worldd log get: store $T/text.db: not a SQLite database \(no SQLite header\); left untouched$" "one line naming the file"
run_capture out err rc sh -c "printf '{}' | '$W' object put --store '$T/text.db' --semantic-id world/invocation-input/v1"
is "$rc" 24 "a writer on a text file: exit 24"
ok "$([ ! -e "$T/text.db-wal" ] && [ ! -e "$T/text.db.writer.lock" ]; echo $?)" "no -wal or lock file left beside the refused file"
: > "$T/empty.db"
run_capture out err rc "$W" scan --store "$T/empty.db"
is "$rc" 24 "an empty file is not a store for a reader: exit 24"
# control: a future schema version is still the schema error (6), not 24
if [ -n "$SQLITE3_SHELL" ]; then
  mkstore "$T/future.db" >/dev/null
  "$SQLITE3_SHELL" "$T/future.db" "PRAGMA journal_mode=DELETE; PRAGMA user_version=99" >/dev/null
  run_capture out err rc "$W" scan --store "$T/future.db"
  is "$rc" 6 "control: a real store of an unknown version stays exit 6"
else
  skip "no sqlite3 shell" "control: a real store of an unknown version stays exit 6"
fi

# ---- 5. lost output is an error -------------------------------------------
DB=$T/w.db
REF=$(mkstore "$DB")
src=$T/echo.ail
printf 'module echo\nexport func main(input: string) -> string { input }\n' > "$src"
full=("--version" "--help" "hash" "json canon" "object get --store $DB $REF" "log get --store $DB 1"
      "world head --store $DB" "profile list" "profile show transition" "session list --store $DB --json"
      "journal --store $DB --indeterminate" "run --ailang-bin $AILANG_LITE --source $src --input {}"
      "check --ailang-bin $AILANG_LITE --source $src" "scan --help")
for v in "${full[@]}"; do
  # shellcheck disable=SC2086
  run_capture out err rc sh -c "printf '{}' | '$W' $v > /dev/full"
  is "$rc" 9 "worldd $v > /dev/full: exit 9"
  like "$err" "write standard output: No space left on device|writ.*stdout.*No space left" "... with a message ($err)"
  # shellcheck disable=SC2086
  run_capture out err rc sh -c "printf '{}' | '$W' $v > /dev/null"
  is "$rc" 0 "control: worldd $v > /dev/null: exit 0"
done

# ---- 7. archive: interpreters only, nothing left behind --------------------
A=$T/arch.db
for bad in /bin/sh "$src" "$FIX"; do
  run_capture out err rc "$W" archive --store "$A" --ailang-bin "$bad"
  nok "$rc" "archive $bad refused (exit $rc)"
  like "$err" "^worldd archive: $bad" "... the error names the BIN given, one line ($err)"
  ok "$(ls -d "$A"* 2>/dev/null | grep -q .; echo $((1 - $?)))" "... and nothing is left behind (no store, lock or artifacts)"
done
run_capture out err rc "$W" archive --store "$A" --ailang-bin /bin/sh
is "$rc" 3 "a dynamically linked binary: exit 3"
run_capture out err rc "$W" archive --store "$A" --ailang-bin "$FIX"
is "$rc" 14 "a static ELF whose --version is not a release line: exit 14"
like "$err" "not a release line" "... says so"
run_capture out err rc "$W" archive --store "$A" --ailang-bin "$T/absent"
is "$rc" 4 "a missing BIN: exit 4"
# control: ailang-lite is archived, and --json describes it
run_capture out err rc "$W" archive --store "$A" --ailang-bin "$AILANG_LITE" --json
is "$rc" 0 "control: ailang-lite is archived"
like "$out" '^\{"created":true,"path":".*/ailang","ref":"sha256:[0-9a-f]{64}","size":[0-9]+,"version":"AILANG-lite v' "archive --json"

# ---- 9. input conventions ---------------------------------------------------
run_capture out err rc "$W" --version
like "$out" "^worldd \(World\) [0-9]+\.[0-9]+\.[0-9]+$" "worldd --version prints one release line"
twice=("scan --store $DB --store $DB" "run --source $src --source $src" "check --source $src --source=$src"
       "world head --store $DB --json --json" "archive --store $A --ailang-bin $AILANG_LITE --ailang-bin x"
       "profile show transition --format text --format json")
for v in "${twice[@]}"; do
  # shellcheck disable=SC2086
  run_capture out err rc "$W" $v
  is "$rc" 2 "repeated flag refused: worldd $v"
  like "$err" "given twice" "... named ($err)"
done
run_capture out err rc "$W" world head --store="$DB"
is "$rc" 0 "--flag=value: world head --store=DB"
run_capture out err rc "$W" profile show --format=json transition
is "$rc" 0 "--flag=value: profile show --format=json"
run_capture out err rc "$W" log get --store="$DB" 1 --json
like "$out" '^\{"entry":\{"entryHash":"sha256:[0-9a-f]{64}","entryIndex":1,' "log get --json"
run_capture out err rc "$W" profile list --json
like "$out" '^\[\{"name":"transition","purpose":' "profile list --json"
run_capture out err rc "$W" profile list
like "$out" "^transition " "control: profile list without --json is the text table"
run_capture out err rc sh -c "'$W' run --ailang-bin '$AILANG_LITE' --source - --input '{\"a\":1}' < '$src'"
is "$out" '{"a":1}' "--source - reads the source from stdin"
run_capture out err rc sh -c "printf '{\"b\":2}' | '$W' run --ailang-bin '$AILANG_LITE' --source '$src' --input-file -"
is "$out" '{"b":2}' "--input-file - reads the input from stdin"
run_capture out err rc "$W" run --ailang-bin "$AILANG_LITE" --source - --input-file -
is "$rc" 2 "--source - with --input-file -: usage"
# \u0000: accepted by json canon and by run, the same way
run_capture out err rc sh -c "printf '{\"a\":\"x\\\\u0000y\"}' | '$W' json canon"
is "$out" '{"a":"x\u0000y"}' "json canon keeps \\u0000"
run_capture out err rc "$W" run --ailang-bin "$AILANG_LITE" --source "$src" --input '{"a":"x\u0000y"}'
is "$rc" 0 "run accepts \\u0000 in the input as json canon does ($err)"
is "$out" '{"a":"x\u0000y"}' "... and passes it through"
unlike "$err" "JSON_ALLOW_NUL" "no library jargon"
# --wait-lock: how long a write waits for another writer's transaction
# (the sqlite3 shell's BEGIN IMMEDIATE, held 3 s here)
rm -f "$DB.held"
( printf 'BEGIN IMMEDIATE;\n.shell touch %s.held\n' "$DB"; sleep 3; printf 'ROLLBACK;\n' ) | "$SQLITE3_SHELL" "$DB" >/dev/null 2>&1 &
holder=$!
for _ in $(seq 1 200); do [ -e "$DB.held" ] && break; sleep 0.05; done
run_capture out err rc sh -c "printf '{\"waits\":1}' | '$W' object put --store '$DB' --semantic-id world/invocation-input/v1 --wait-lock 0.2"
is "$rc" 5 "control: a write waiting longer than --wait-lock 0.2 for another writer fails (exit 5)"
printf '{"q":1}' > "$T/q.json"
"$W" object put --store "$DB" --semantic-id world/invocation-input/v1 --wait-lock 120 < "$T/q.json" > "$T/q.out" 2>&1 &
qpid=$!
sleep 0.5
ok "$(kill -0 "$qpid" 2>/dev/null; echo $?)" "the --wait-lock writer is waiting while the other transaction is open"
wait "$holder"
wait "$qpid"; qrc=$?
is "$qrc" 0 "--wait-lock: it commits once the other transaction ended"
is "$(cat "$T/q.out")" "$(printf '{"q":1}' | "$W" hash)" "... and prints the ref"
run_capture out err rc "$W" object put --store "$DB" --semantic-id world/x/v1 --wait-lock soon
is "$rc" 2 "--wait-lock needs a number of seconds"
done_testing
