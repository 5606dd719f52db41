#!/bin/bash
# Denials are attributable (issue 25, item 4; docs/security.md "Where denials
# are recorded"). Through the real daemon, calls whose interpreter makes a
# syscall outside the capsule's filter (tests/supervisor/stub-interp:
# `denied` calls keyctl, `denied-ioctl` ioctl(TIOCSTI)) are stopped, and
#   - the daemon's log has one `denied` line naming syscall, number, ABI,
#     skill, episode, invocation id and the record;
#   - the store holds the committed denial record (world/invocation-denial/v1)
#     with the same facts, the journal's invocation outcome "failed" names it,
#     `worldd why INVOCATION-ID` says so, and `worldd journal --denials`
#     lists it (read-only, while the daemon serves; --since, --episode, --json);
#   - each episode's denial is attributed to its own episode, and a session's
#     scoped reads show its own denial record and not the other's (the
#     operator token, the control, sees both);
#   - CONTROL: an allowed call (the same interpreter, `echo`) commits and
#     leaves no denied line and no record; and the store still scans clean.
# The expected numbers come from this host's <sys/syscall.h> (the C
# preprocessor), not from the code under test.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
command -v curl >/dev/null || { skip "curl not installed" "daemon denial tests"; done_testing; exit; }
command -v python3 >/dev/null || { skip "python3 not installed" "daemon denial tests"; done_testing; exit; }
NRS=$(printf '#include <sys/syscall.h>\nSYS_keyctl SYS_ioctl\n' | ${CC:-cc} -E -P -x c - 2>/dev/null | tail -n 1)
NR_KEYCTL=${NRS%% *} NR_IOCTL=${NRS##* }
case "$NR_KEYCTL:$NR_IOCTL" in
  *[!0-9:]* | :* | *:) skip "no C preprocessor to read <sys/syscall.h>" "daemon denial tests"; done_testing; exit ;;
esac
[ "$(uname -m)" = x86_64 ] || { skip "the capsule filter is x86_64 only" "daemon denial tests"; done_testing; exit; }
STUB="$top_builddir/tests/supervisor/stub-interp"
T=$(mktemp -d "${TMPDIR:-/tmp}/world-denials.XXXXXX")
trap 'daemon_kill; rm -rf "$T"' EXIT
DB="$T/db"
for s in denied denied-ioctl echo; do
  printf '%s\n' "$s" > "$T/$s.ail"
  "$FIXTURE" publish "$DB" "$STUB" "tests.${s//-/}" "$T/$s.ail" || bail "fixture publish $s"
done
CA=$(printf 'a%.0s' $(seq 64)) CB=$(printf 'b%.0s' $(seq 64))
"$FIXTURE" session "$DB" "$CA" ep-a '[]' +3600 || bail "fixture session ep-a"
"$FIXTURE" session "$DB" "$CB" ep-b '[]' +3600 || bail "fixture session ep-b"
daemon_start || bail "daemon did not start: $(cat "$T/err")"
TOKEN=$(cat "$DB.operator-token")

call() { # CRED TOOL TASK: one MCP tools/call with an idempotency key
  mcp "$1" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$2\",\"arguments\":{\"k\":\"$3\"},\"_meta\":{\"world/task_id\":\"$3\"}}}"
}
denied_lines() { grep ' worldd denied ' "$T/err"; }

# ---- the control first: an allowed call of the same interpreter ----
call "$CA" tests_decho ok1
is "$(sse_json | jget result.isError)" false "control: an allowed call (stub echo) commits"
is "$(denied_lines | wc -l)" 0 "control: ... and the log has no denied line"

# ---- ep-a: keyctl ----
call "$CA" tests_ddenied ka1
like "$(sse_json | jget result.content.0.text)" "syscall denied: keyctl; capsule killed" "ep-a: the call fails naming the syscall"
line=$(denied_lines | grep 'invocation_id=mcp:ep-a:ka1 ')
like "$line" "worldd denied syscall=keyctl nr=$NR_KEYCTL arch=x86_64 skill=tests.denied episode=ep-a invocation_id=mcp:ep-a:ka1 record=sha256:[0-9a-f]{64}\$" \
  "ep-a: one log line names syscall, nr $NR_KEYCTL, ABI, skill, episode, invocation id and record ($line)"
REC_A=${line##*record=}
# The request line of a failed call carries its class, not its invocation
# id (daemon/mcp.c sets that for a committed call): the denied line is the
# one that attributes it.
like "$(grep ' worldd request ' "$T/err" | tail -n 1)" "route=/mcp/ status=200 .*rpc=tools/call,error=SyscallDenied\$" \
  "ep-a: the call's request line follows, with error=SyscallDenied"

# ---- ep-b: ioctl(TIOCSTI), over MCP; and keyctl over A2A ----
call "$CB" tests_ddeniedioctl kb1
like "$(sse_json | jget result.content.0.text)" "syscall denied: ioctl\\(TIOCSTI\\); capsule killed" "ep-b: the ioctl call fails naming the request"
line=$(denied_lines | grep 'invocation_id=mcp:ep-b:kb1 ')
like "$line" "worldd denied syscall=ioctl nr=$NR_IOCTL arch=x86_64 ioctl=TIOCSTI ioctl_cmd=0x5412 skill=tests.deniedioctl episode=ep-b invocation_id=mcp:ep-b:kb1 record=sha256:[0-9a-f]{64}\$" \
  "ep-b: the ioctl line names ioctl nr $NR_IOCTL and the refused request TIOCSTI 0x5412 ($line)"
REC_B=${line##*record=}
http POST /a2a/ -H "$(auth "$CB")" -H 'Content-Type: application/json' --data-binary \
  '{"jsonrpc":"2.0","id":2,"method":"tasks/send","params":{"id":"kb2","message":{"role":"user","parts":[{"type":"data","data":{}}]},"metadata":{"skill_id":"tests.denied"}}}'
like "$(jget result.status.message.parts.0.text <<<"$BODY")" "SyscallDenied: syscall denied: keyctl" "ep-b over A2A: the task fails as SyscallDenied"
like "$(denied_lines | grep 'invocation_id=a2a:ep-b:kb2 ')" "syscall=keyctl nr=$NR_KEYCTL arch=x86_64 skill=tests.denied episode=ep-b invocation_id=a2a:ep-b:kb2 record=" "ep-b over A2A: its own denied line, attributed to ep-b"
is "$(denied_lines | wc -l)" 3 "three denied calls, three denied lines"
is "$(denied_lines | grep -c 'episode=ep-a')" 1 "ep-a's one denial is the only line naming ep-a"

# ---- the store, read while the daemon serves ----
run_capture out err rc "$WORLDD" journal --store "$DB" --denials
is "$rc" 0 "journal --denials: exit 0 while the daemon serves (read-only)"
is "$(printf '%s\n' "$out" | tail -n 1)" "3 denial(s)" "journal --denials: three denials"
like "$(printf '%s\n' "$out" | grep 'invocation_id=mcp:ep-a:ka1 ')" \
  "^denied at=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z syscall=keyctl nr=$NR_KEYCTL arch=x86_64 skill=tests.denied episode=ep-a invocation_id=mcp:ep-a:ka1 record=$REC_A\$" \
  "journal --denials: ep-a's line names the same syscall, nr, skill, episode, invocation id and record as the log"
like "$(printf '%s\n' "$out" | grep 'invocation_id=mcp:ep-b:kb1 ')" \
  "syscall=ioctl nr=$NR_IOCTL arch=x86_64 ioctl=TIOCSTI ioctl_cmd=0x5412 skill=tests.deniedioctl episode=ep-b invocation_id=mcp:ep-b:kb1 record=$REC_B\$" \
  "journal --denials: ep-b's ioctl line too"
unlike "$out" "ok1" "control: the allowed call is not listed"
run_capture out err rc "$WORLDD" journal --store "$DB" --denials --episode ep-a --json
is "$rc" 0 "journal --denials --episode ep-a --json: exit 0"
is "$(python3 -c 'import json,sys; v=json.load(sys.stdin); print(len(v), v[0]["episodeId"], v[0]["skillId"], v[0]["invocationId"], v[0]["syscall"], v[0]["nr"], v[0]["arch"], v[0]["record"] == sys.argv[1], "ioctl" in v[0], v[0]["message"])' "$REC_A" <<<"$out")" \
  "1 ep-a tests.denied mcp:ep-a:ka1 keyctl $NR_KEYCTL x86_64 True False syscall denied: keyctl; capsule killed" \
  "--json: ep-a's one denial, every field"
run_capture out err rc "$WORLDD" journal --store "$DB" --denials --episode ep-b --json
is "$(python3 -c 'import json,sys; v=json.load(sys.stdin); print(len(v), sorted(x["invocationId"] for x in v), [x.get("ioctl") for x in v if x["syscall"] == "ioctl"])' <<<"$out")" \
  "2 ['a2a:ep-b:kb2', 'mcp:ep-b:kb1'] [{'cmd': '0x5412', 'name': 'TIOCSTI'}]" "--episode ep-b: its two denials, the ioctl's request named"
run_capture out err rc "$WORLDD" journal --store "$DB" --denials --since 1h
is "$(printf '%s\n' "$out" | tail -n 1)" "3 denial(s)" "--since 1h: all three (recorded just now)"
run_capture out err rc "$WORLDD" journal --store "$DB" --denials --since "$(( $(date +%s) + 3600 ))"
is "$rc:$out" "0:0 denial(s)" "--since an hour ahead: none (the filter applies)"
run_capture out err rc "$WORLDD" journal --store "$DB" --denials --since yesterday
is "$rc" 2 "--since yesterday: usage error (exit 2)"

# the committed record itself, as the operator reads it
http GET "/v1/objects/$REC_A?payload=true" -H "$(auth "$TOKEN")"
is "$(jget semanticId <<<"$BODY")/$(jget provenance <<<"$BODY")" "world/invocation-denial/v1/mcp:ep-a:ka1" "the record is a world/invocation-denial/v1 labelled with its invocation id"
is "$(jget payload <<<"$BODY" | base64 -d | python3 -c 'import json,sys; r=json.load(sys.stdin); e=r["error"]; print(r["invocationId"], r["episodeId"], r["skillId"], e["class"], e["denial"])')" \
  "mcp:ep-a:ka1 ep-a tests.denied SyscallDenied {'arch': 'x86_64', 'nr': $NR_KEYCTL, 'syscall': 'keyctl'}" \
  "its payload: invocation, episode, skill, class SyscallDenied and error.denial {syscall, nr, arch}"
run_capture out err rc "$WORLDD" why mcp:ep-a:ka1 --store "$DB"
is "$rc" 4 "why INVOCATION-ID of a denied call: exit 4 (not committed)"
is "$err" "worldd why: invocation mcp:ep-a:ka1: not committed: the seccomp filter stopped it (syscall keyctl, nr $NR_KEYCTL), denial record $REC_A (worldd journal --denials)" \
  "... naming the syscall, its number and the denial record"
run_capture out err rc "$WORLDD" why mcp:ep-a:ok1 --store "$DB"
is "$rc" 0 "control: why of the allowed call walks its committed entry (exit 0)"

# ---- scoped reads: each session sees its own denial record only ----
sid=/v1/objects/by-semantic-id/world/invocation-denial/v1
http GET "$sid" -H "$(auth "$CA")"
is "$(jget items <<<"$BODY" | python3 -c 'import json,sys; print([i["provenance"] for i in json.load(sys.stdin)])')" "['mcp:ep-a:ka1']" \
  "ep-a's listing of denial records: only its own"
http GET "$sid" -H "$(auth "$CB")"
is "$(jget items <<<"$BODY" | python3 -c 'import json,sys; print(sorted(i["provenance"] for i in json.load(sys.stdin)))')" "['a2a:ep-b:kb2', 'mcp:ep-b:kb1']" \
  "ep-b's listing: only its own two"
http GET "$sid" -H "$(auth "$TOKEN")"
is "$(jget items <<<"$BODY" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" 3 "control: the operator token lists all three"
http GET "/v1/objects/$REC_B" -H "$(auth "$CA")"
is "$STATUS" 404 "ep-a cannot read ep-b's denial record (404, as an unknown ref)"
http GET "/v1/objects/$REC_B" -H "$(auth "$CB")"
is "$STATUS" 200 "control: ep-b reads its own"
daemon_stop
is "$DRC" 0 "the daemon exits 0 on SIGTERM"

# ---- the journal rows and the store's integrity ----
if [ -n "${SQLITE3_SHELL:-}" ]; then
  is "$("$SQLITE3_SHELL" "$DB" "SELECT o.status || ' ' || o.ref FROM journal i JOIN journal o ON o.phase = 'outcome' AND o.intent_id = i.id WHERE i.phase = 'intent' AND i.kind = 'invocation' AND i.subject = 'mcp:ep-a:ka1'")" \
    "failed $REC_A" "the journal's invocation outcome of the denied call is \"failed\", naming the denial record"
  is "$("$SQLITE3_SHELL" "$DB" "SELECT count(*) FROM log_entries")" 1 "no log entry for a denial: only the allowed call's"
else
  skip "no sqlite3 shell" "the journal outcome of a denial"; skip "no sqlite3 shell" "no log entry for a denial"
fi
run_capture out err rc "$WORLDD" scan --store "$DB" --objects
is "$rc:$out" "0:" "the store with denial records scans clean (--objects too)"
done_testing
