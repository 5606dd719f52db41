#!/bin/bash
# worldd serve: scoped reads (docs/daemon.md "Who sees what"). Two sessions
# in two episodes each write a file with ailang-write (and episode A reads
# its file back with ailang-read). With session B's credential, a walker
# that is handed every ref, semantic id, world and index the store holds
# (the strongest guesser) walks every read route -- objects with and
# without payload, the semantic-id listings (paged), the log (paged, both
# page sizes), every log entry, every world, the head, the registry head,
# and POST /v1/replay/N -- and gets zero bytes of A's written content and
# none of A's invocation ids; what it may not see answers exactly as what
# does not exist. B still sees its own (its content, its entries, its
# listing), paging is exact, and the CONTROL: the operator token's walk of
# the same routes does read A's bytes. --open-reads exposes them to anyone.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
command -v curl >/dev/null || { skip "curl not installed" "scoped read tests"; done_testing; exit; }
[ -n "${SQLITE3_SHELL:-}" ] || { skip "no sqlite3 shell" "scoped read tests"; done_testing; exit; }
PFIX="$top_builddir/tests/packages/packages-fixture"
[ -x "$PFIX" ] || { skip "tests/packages/packages-fixture not built" "scoped read tests"; done_testing; exit; }

T=$(mktemp -d "${TMPDIR:-/tmp}/world-scoped.XXXXXX")
trap 'daemon_kill; rm -rf "$T"' EXIT
mkdir -p "$T/ws/ep-a" "$T/ws/ep-b"
grants=(Workspace.Read=worktree:100 Workspace.Write=worktree:100)
MF="$top_srcdir/packages/se-tools/transitions.json"
CA=$("$PFIX" "$T" "$top_srcdir" ep-a "$MF" "${grants[@]}") || bail "packages fixture ep-a"
CB=$("$PFIX" "$T" "$top_srcdir" ep-b "$MF" "${grants[@]}") || bail "packages fixture ep-b"
CC=$("$PFIX" "$T" "$top_srcdir" ep-c "$MF" "${grants[@]}") || bail "packages fixture ep-c"
DB=$T/world.db
q() { "$SQLITE3_SHELL" "$DB" "$1"; }
SA="alpha-private-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
SB="bravo-private-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"

daemon_start --workspace-root "$T/ws" --tool-ailang-bin "$AILANG_LITE" || bail "daemon did not start"
TOKEN=$(cat "$DB.operator-token")
tool() { # CRED NAME ARGS-JSON
  mcp "$1" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$2\",\"arguments\":$3}}"
  [ "$STATUS" = 200 ] && sse_json | grep -q '"isError":false'
}
tool "$CA" ailang-write "{\"path\":\"src/a.ail\",\"content\":\"-- $SA\\n\"}"; ok $? "A: ailang-write committed"
tool "$CB" ailang-write "{\"path\":\"src/b.ail\",\"content\":\"-- $SB\\n\"}"; ok $? "B: ailang-write committed"
tool "$CA" ailang-read '{"path":"src/a.ail"}'; ok $? "A: ailang-read of its file committed"
sse_json | grep -q "$SA"; ok $? "... and its output holds A's content (so the read result does too)"
is "$(cat "$T/ws/ep-a/src/a.ail")" "-- $SA" "A's file is in A's worktree"
is "$(q 'SELECT count(*) FROM log_entries')" 3 "three entries"
# what A's content is stored in, as the operator sees the store
HELD=$(q "SELECT group_concat(semantic_id, ' ') FROM (SELECT semantic_id FROM objects WHERE instr(CAST(payload AS TEXT), '$SA') > 0 ORDER BY 1)")
like "$HELD" "world/effect-request/v1.*world/effect-result/v1.*world/invocation-input/v1.*world/invocation-output/v1" \
  "A's bytes are in the write's input and request, the read's result and output ($HELD)"

# The walker's knowledge: everything the store holds.
q "SELECT ref FROM objects" > "$T/refs"
q "SELECT DISTINCT semantic_id FROM objects" > "$T/sids"
q "SELECT ref FROM worlds" > "$T/worlds"
q "SELECT entry_hash FROM log_entries" >> "$T/refs"
walk() { # OUT CRED ('' = none): walks every route, writes a JSON summary to OUT
  python3 - "$URL" "$2" "$T/refs" "$T/sids" "$T/worlds" "$(q 'SELECT max(entry_index) FROM log_entries')" "$SA" "$SB" > "$1" <<'EOF'
import base64, json, re, sys, urllib.request, urllib.error
url, cred, refs_f, sids_f, worlds_f, last, sa, sb = sys.argv[1:]
last = int(last)
bodies = []           # every answer, and every payload decoded
answers = {}          # path -> (status, body)
def get(path, method="GET"):
    req = urllib.request.Request(url + path, method=method)
    if cred: req.add_header("Authorization", "Bearer " + cred)
    try:
        with urllib.request.urlopen(req, timeout=60) as r: st, b = r.status, r.read()
    except urllib.error.HTTPError as e: st, b = e.code, e.read()
    bodies.append(b)
    answers[method + " " + path] = (st, b.decode("utf-8", "replace"))
    try: j = json.loads(b)
    except Exception: j = None
    if isinstance(j, dict) and isinstance(j.get("payload"), str):
        bodies.append(base64.b64decode(j["payload"]))
    return st, j
known = set(l.strip() for l in open(refs_f) if l.strip())
sids = [l.strip() for l in open(sids_f) if l.strip()]
worlds = [l.strip() for l in open(worlds_f) if l.strip()]
get("/v1/head")
get("/v1/registry/world/transition-registry/v1")
log_items = {}
for limit in (500, 1):
    frm, seen = 1, []
    while frm is not None and len(seen) < 1000:
        st, j = get("/v1/log?from=%d&limit=%d" % (frm, limit))
        if st != 200: break
        seen += [it["header"]["entryIndex"] for it in j["items"]]
        frm = j["next"]
    log_items[limit] = seen
for i in range(1, last + 1):
    get("/v1/log/%d" % i)
    get("/v1/replay/%d" % i, "POST")
for w in worlds: get("/v1/worlds/" + w)
listed = {}
for sid in sids:
    after, got = "", []
    while True:
        st, j = get("/v1/objects/by-semantic-id/%s?limit=2%s" % (sid, "&after=" + after if after else ""))
        if st != 200: break
        got += [it["hash"] for it in j["items"]]
        if j["next"] is None: break
        after = j["next"]
    listed[sid] = got
# every ref known or seen anywhere in an answer, until nothing new turns up
done = set()
while True:
    for b in list(bodies):
        known |= set(m.decode() for m in re.findall(rb"sha256:[0-9a-f]{64}", b))
    todo = known - done
    if not todo: break
    for r in sorted(todo):
        done.add(r)
        get("/v1/objects/" + r)
        get("/v1/objects/" + r + "?payload=true")
blob = b"\n".join(bodies)
print(json.dumps({"a": blob.count(sa.encode()), "b": blob.count(sb.encode()),
                  "a_ids": blob.count(b"mcp:ep-a:"), "b_ids": blob.count(b"mcp:ep-b:"),
                  "requests": len(answers), "log500": log_items[500], "log1": log_items[1],
                  "listed": listed, "answers": answers}))
EOF
}
jq_() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }

walk "$T/b.json" "$CB"
like "$(jq_ "$T/b.json" 'd["requests"]')" '^[0-9]{2,}$' "B's walk made $(jq_ "$T/b.json" 'd["requests"]') requests"
is "$(jq_ "$T/b.json" 'd["a"]')" 0 "B's credential: zero copies of A's written content on any read route"
is "$(jq_ "$T/b.json" 'd["a_ids"]')" 0 "... and none of A's invocation ids"
ok "$([ "$(jq_ "$T/b.json" 'd["b"]')" -gt 0 ]; echo $?)" "B reads its own content (not a walk that sees nothing)"
ok "$([ "$(jq_ "$T/b.json" 'd["b_ids"]')" -gt 0 ]; echo $?)" "... and its own invocation ids"
BE=$(q "SELECT group_concat(entry_index) FROM (SELECT entry_index FROM episode_entries WHERE episode = 'ep-b' ORDER BY 1)")
is "$BE" 2 "the store's episode_entries: B's call is entry 2"
is "$(jq_ "$T/b.json" '",".join(map(str, d["log500"]))')" "$BE" "B's /v1/log lists exactly B's entries"
is "$(jq_ "$T/b.json" '",".join(map(str, d["log1"]))')" "$BE" "... the same one page of 1 at a time"
BR=$(q "SELECT group_concat(ref) FROM (SELECT o.ref FROM objects o JOIN episode_objects m ON m.ref = o.ref AND m.episode = 'ep-b' WHERE o.semantic_id = 'world/effect-request/v1' ORDER BY 1)")
is "$(jq_ "$T/b.json" '",".join(d["listed"]["world/effect-request/v1"])')" "$BR" \
  "B's effect-request listing (pages of 2): B's request only"
is "$(jq_ "$T/b.json" 'len(d["listed"]["world/transition-source/v1"])')" "$(q "SELECT count(*) FROM objects WHERE semantic_id = 'world/transition-source/v1'")" \
  "... the public transition sources all"
is "$(jq_ "$T/b.json" 'd["answers"]["GET /v1/head"][0]')" 200 "B's head answers"
is "$(jq_ "$T/b.json" 'json.loads(d["answers"]["GET /v1/head"][1])["revision"]')" 2 "... with B's newest world (revision 2), not the selected head (3)"
is "$(jq_ "$T/b.json" 'd["answers"]["POST /v1/replay/2"][0]')" 200 "B replays its own entry"

# What B may not see answers as what does not exist, word for word.
same() { # WHAT PATH-SEEN PATH-ABSENT OLD NEW: B's answers to both, OLD replaced by NEW in the second
  local s1 b1 s2 b2
  http "${6:-GET}" "$2" -H "$(auth "$CB")"; s1=$STATUS; b1=$BODY
  http "${6:-GET}" "$3" -H "$(auth "$CB")"; s2=$STATUS; b2=${BODY//$5/$4}
  is "$s1 $b1" "$s2 $b2" "$1"
}
AREQ=$(q "SELECT ref FROM objects WHERE semantic_id = 'world/effect-request/v1' AND instr(CAST(payload AS TEXT), '$SA') > 0")
like "$AREQ" '^sha256:[0-9a-f]{64}$' "A's write request, the one holding A's content (from the store)"
NOPE=sha256:$(printf '%s' "nothing-$SA" | sha256sum | cut -d' ' -f1)
same "A's object by ref: exactly the absent ref's 404" "/v1/objects/$AREQ" "/v1/objects/$NOPE" "$AREQ" "$NOPE"
same "... with ?payload=true too" "/v1/objects/$AREQ?payload=true" "/v1/objects/$NOPE?payload=true" "$AREQ" "$NOPE"
is "$STATUS/$(jget error.class <<<"$BODY")" 404/NotFound "... 404 NotFound"
same "A's log entry 1: exactly an absent index's answer" /v1/log/1 /v1/log/99999 1 99999
AW=$(q "SELECT ref FROM worlds WHERE revision = 1")
same "A's world: exactly an absent world's answer" "/v1/worlds/$AW" "/v1/worlds/$NOPE" "$AW" "$NOPE"
same "replay of A's entry 3: exactly an absent entry's answer" /v1/replay/3 /v1/replay/99999 3 99999 POST
http GET /v1/head -H "$(auth "$CC")"
is "$STATUS/$(jget error.class <<<"$BODY")" 404/NotFound "a session whose episode committed nothing: no head"
http GET /v1/log -H "$(auth "$CC")"
is "$(jget items <<<"$BODY")/$(jget next <<<"$BODY")" "[]/null" "... and an empty log"

# CONTROL: the operator token's walk of the same routes reads A's bytes.
walk "$T/op.json" "$TOKEN"
ok "$([ "$(jq_ "$T/op.json" 'd["a"]')" -gt 0 ]; echo $?)" "control: the operator token reads A's written content ($(jq_ "$T/op.json" 'd["a"]') copies)"
ok "$([ "$(jq_ "$T/op.json" 'd["a_ids"]')" -gt 0 ]; echo $?)" "control: ... and A's invocation ids"
is "$(jq_ "$T/op.json" '",".join(map(str, d["log500"]))')" 1,2,3 "control: the operator's log lists every entry"
is "$(jq_ "$T/op.json" '",".join(map(str, d["log1"]))')" 1,2,3 "... one page of 1 at a time too"
is "$(jq_ "$T/op.json" 'len(d["listed"]["world/effect-request/v1"])')" 3 "control: the operator lists all three effect requests"
http GET "/v1/objects/$AREQ?payload=true" -H "$(auth "$TOKEN")"
is "$STATUS" 200 "control: the operator reads A's request by ref"
like "$(jget payload <<<"$BODY" | base64 -d)" "$SA" "... and its payload is A's content"
http GET "/v1/objects/$AREQ?payload=true" -H "$(auth "$CA")"
is "$STATUS" 200 "A reads its own request"
like "$(jget payload <<<"$BODY" | base64 -d)" "$SA" "... with A's content"
daemon_stop
is "$DRC" 0 "daemon stops cleanly"

# --open-reads: every GET /v1/* without a credential sees everything (documented).
daemon_start --open-reads --workspace-root "$T/ws" --tool-ailang-bin "$AILANG_LITE" || bail "daemon did not start"
http GET "/v1/objects/$AREQ?payload=true"
is "$STATUS" 200 "--open-reads: A's request is readable without any credential"
like "$(jget payload <<<"$BODY" | base64 -d)" "$SA" "... its content too: --open-reads is for a trusted host only"
daemon_stop
done_testing
