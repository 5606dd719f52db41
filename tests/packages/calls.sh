#!/bin/bash
# The packages called through `worldd call` on a real worktree: tools.echo,
# then every se-tools tool (read, write, edit, check of a good and a bad
# file, run, both searches, two CLI ops) under a session holding a grant for
# each effect. Each committed call is checked in the store: the next log
# entry, whose invocation record names the skill, whose stored output is the
# printed output byte for byte, and whose plan and effect records are the
# ones the output's world block names. Refusals: the plan's own (committed,
# no effect, nothing written to the worktree) and the input schema's
# (before execution, nothing committed).
. "$top_srcdir/tests/tap.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ws=$T/ws
mkdir -p "$ws/ep1"
grants=(Workspace.Read=worktree:100 Workspace.Write=worktree:100 Ailang.Check=worktree:100
        Ailang.Run=worktree:100 Ailang.Discover=worktree:100 Ailang.CLI=worktree:100 Workspace.Exec=worktree:100)
DB=$T/world.db
# The store is made the product's way: epoch bootstrap, both packages
# published with world-publish, a session minted with worldd session mint;
# the two attended steps are confirmed through a pseudo-terminal with CI
# removed from that child's environment.
PTY="$top_srcdir/tests/publish/pty.py"
"$WORLDD" epoch bootstrap --store "$DB" --ailang-bin "$AILANG_LITE" > /dev/null || bail "epoch bootstrap"
for m in packages/quickstart/transitions.json packages/se-tools/transitions.json; do
  n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$top_srcdir/$m")
  (cd "$top_srcdir" && env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '> ' --answer "publish $n transitions to $DB" \
    --out "$T/pub.out" --err "$T/pub.err" --tty "$T/pub.tty" -- \
    "$top_builddir/cli/world-publish" transitions --store "$DB" --manifest "$m" --ailang-bin "$AILANG_LITE") ||
    bail "world-publish $m: $(cat "$T/pub.err")"
done
gargs=(); for g in "${grants[@]}"; do gargs+=(--grant "$g"); done
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '[y/N] ' --answer y --out "$T/mint.out" --err "$T/mint.err" \
  --tty "$T/mint.tty" -- "$WORLDD" session mint --store "$DB" --episode ep1 "${gargs[@]}" || bail "mint: $(cat "$T/mint.err")"
cred=$(cat "$T/mint.out")

call() { # call SKILL ARGS: sets out, err, rc
  run_capture out err rc "$WORLDD" call --store "$DB" --session "$cred" --workspace-root "$ws" \
    --tool-ailang-bin "$AILANG_LITE" --examples-dir "$top_srcdir/packages/se-tools/examples" "$1" --json "$2"
}
entries=0

# committed SKILL: the last call committed entry entries+1, checked in the store
committed() {
  entries=$((entries + 1))
  local verdict
  printf '%s' "$out" > "$T/printed"
  verdict=$(python3 - "$WORLDD" "$DB" "$entries" "$1" "$T/printed" <<'PY'
import json, subprocess, sys
worldd, db, n, skill = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
printed = open(sys.argv[5], "rb").read()
def get(*a):
    p = subprocess.run([worldd] + list(a), capture_output=True)
    if p.returncode != 0:
        raise SystemExit("worldd %s: exit %d: %s" % (" ".join(a[:2]), p.returncode, p.stderr.decode()))
    return p.stdout
entry = json.loads(get("log", "get", "--store", db, n))
rec = json.loads(get("object", "get", "--store", db, "--payload", entry["transitionRef"]))
out = json.loads(printed)
errs = []
if rec.get("skillId") != skill:
    errs.append("record skillId %r" % rec.get("skillId"))
if entry.get("transitionFn") != rec.get("transitionFn"):
    errs.append("entry and record name different sources")
if get("object", "get", "--store", db, "--payload", rec["output"]) != printed:
    errs.append("stored output differs from the printed one")
w = out.get("world")
if w is not None:
    if rec.get("plan") != w.get("plan"):
        errs.append("record plan %s, world.plan %s" % (rec.get("plan"), w.get("plan")))
    if rec.get("effects") != [e["record"] for e in w.get("effects", [])]:
        errs.append("record effects differ from world.effects")
    for r in rec.get("effects", []):
        er = json.loads(get("object", "get", "--store", db, "--payload", r))
        if not er.get("allowed") or er.get("failed") or er.get("scope") != "worktree" or er.get("cost") != 1:
            errs.append("effect record %s" % json.dumps(er))
    plan = json.loads(get("object", "get", "--store", db, "--payload", w["plan"]))
    if plan.get("plan") != "world/effect-plan/v1" or "world" in plan:
        errs.append("stored plan %s" % json.dumps(plan)[:200])
print("; ".join(errs) if errs else "ok")
PY
)
  is "$verdict" ok "$1: committed as entry $entries (record, output, plan and effect records agree)"
}
jget() { printf '%s' "$out" | python3 -c 'import json,sys; v=json.load(sys.stdin)
for k in sys.argv[1:]: v = v[int(k)] if isinstance(v, list) else v.get(k)
print(json.dumps(v) if not isinstance(v, str) else v)' "$@"; }

# ---- the quick start ----
call tools.echo '{ "b":1, "a":2 }'
is "$rc" 0 "tools.echo: exit 0"
is "$out" '{"echo":{"a":2,"b":1}}' "tools.echo echoes the canonical arguments"
committed tools.echo

# ---- Workspace.* tools ----
src='export func main(input: string) -> string { input }'
call ailang-write "{\"path\":\"src/good.ail\",\"content\":\"$src\\n\"}"
is "$rc" 0 "ailang-write: exit 0"
is "$(jget ok):$(jget bytes):$(jget path)" "true:$(( ${#src} + 1 )):src/good.ail" "ailang-write: ok, bytes and path"
is "$(cat "$ws/ep1/src/good.ail")" "$src" "ailang-write: the file is in the worktree"
is "$(jget world effects 0 status)" ok "ailang-write: one effect, status ok"
committed ailang-write

call ailang-read '{"path":"src/good.ail"}'
is "$rc:$(jget ok)" "0:true" "ailang-read: exit 0, ok"
is "$(jget content)" "$src" "ailang-read: the content"
committed ailang-read

call ailang-edit '{"path":"src/good.ail","old_text":"{ input }","new_text":"{ \"{\\\"edited\\\":true}\" }"}'
is "$rc:$(jget ok)" "0:true" "ailang-edit: exit 0, ok"
is "$(cat "$ws/ep1/src/good.ail")" 'export func main(input: string) -> string { "{\"edited\":true}" }' "ailang-edit: the file changed"
committed ailang-edit
call ailang-edit '{"path":"src/good.ail","old_text":"no such text","new_text":"x"}'
is "$rc:$(jget ok)" "0:false" "ailang-edit of a text that does not occur: the handler refuses (ok false)"
like "$(jget refused)" '.' "... saying why"
committed ailang-edit

# the plan's own refusals: committed, no effect, nothing in the worktree
call ailang-read '{"path":"../outside"}'
is "$rc" 0 "ailang-read ../outside: exit 0 (a committed refusal)"
is "$(jget ok):$(jget world effects)" "false:[]" "... ok false, no effect"
like "$(jget refused)" 'has a ".." component' "... the plan says why"
committed ailang-read
call ailang-write '{"path":".git/hooks/pre-commit","content":"#!/bin/sh\nexit 0\n"}'
is "$(jget ok):$(jget world effects)" "false:[]" "ailang-write .git/hooks/pre-commit: refused by the plan, no effect"
ok "$([ ! -e "$ws/ep1/.git" ]; echo $?)" "... nothing written under .git"
committed ailang-write

# the input schema's refusal: before execution, nothing committed
call ailang-read '{"path":"a","mode":"x"}'
is "$rc" 21 "an unknown argument key: refused before execution (exit 21)"
like "$err" 'input schema: /mode: additional property not allowed' "... naming the key"
"$WORLDD" log get --store "$DB" "$((entries + 1))" > /dev/null 2>&1
nok $? "... nothing committed (no entry $((entries + 1)))"
"$WORLDD" log get --store "$DB" "$entries" > /dev/null 2>&1
ok $? "control: entry $entries is there"

# ---- workspace-exec: no exec profile is given to worldd call, so the
# handler refuses after the plan (one effect, committed); the plan's own
# refusal has no effect; the input schema refuses before execution ----
call workspace-exec '{"command":"test","args":["-v"]}'
is "$rc:$(jget ok)" "0:false" "workspace-exec without an exec profile: exit 0, ok false (a committed refusal)"
like "$(jget refused)" 'exec-profile' "... the handler names the flag that gives one"
is "$(jget world effects 0 status)" ok "... after one Workspace.Exec effect"
committed workspace-exec
call workspace-exec '{"command":"Test","args":[]}'
is "$rc:$(jget ok):$(jget world effects)" "0:false:[]" "workspace-exec of a command that is not an id: refused by the plan, no effect"
like "$(jget refused)" '^command "Test" refused: a command id must match' "... the plan says why"
committed workspace-exec
call workspace-exec '{"command":"test","cwd":"/"}'
is "$rc" 21 "workspace-exec with a cwd argument: refused before execution (exit 21)"
like "$err" 'input schema: /cwd: additional property not allowed' "... naming the key"

# ---- Ailang.* tools ----
call ailang-check '{"path":"src/good.ail"}'
if [ "$rc" = 21 ] && printf '%s' "$err" | grep -q 'which no handler here serves'; then
  for t in "ailang-check (good file)" "ailang-check (bad file)" ailang-run builtins-search examples-search \
           "ailang-cli iface" "ailang-cli version"; do
    skip "no Ailang.* handler in this build" "$t through worldd call"
  done
else
  is "$rc:$(jget ok):$(jget passed):$(jget error_count)" "0:true:true:0" "ailang-check of a good file: passed"
  committed ailang-check
  printf 'export func main(input: string) -> string { nope }\n' > "$ws/ep1/src/bad.ail"
  call ailang-check '{"path":"src/bad.ail"}'
  is "$rc:$(jget passed):$(jget error_count)" "0:false:1" "ailang-check of a bad file: not passed, one error"
  is "$(jget errors 0 code)" TC_UNDEFINED_001 "... the error's code"
  committed ailang-check

  call ailang-run '{"path":"src/good.ail","args_json":"{}"}'
  is "$rc:$(jget exit_code)" "0:0" "ailang-run: exit 0, the program's exit code 0"
  is "$(jget stdout)" '{"edited":true}' "ailang-run: the program's output"
  committed ailang-run

  call builtins-search '{"query":"json"}'
  is "$rc:$(jget ok)" "0:true" "builtins-search: ok"
  n=$(jget count)
  ok $(( n > 0 ? 0 : 1 )) "builtins-search json: $n builtins found"
  is "$(printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin)
print(all("json" in (b["name"]+b["module"]+b["signature"]).lower() for b in d["builtins"]) and len(d["builtins"]) == d["count"])')" True "... every one matches the query"
  committed builtins-search

  call examples-search '{"query":"pattern"}'
  is "$rc:$(jget ok)" "0:true" "examples-search: ok"
  like "$(jget stdout)" 'list-patterns' "examples-search pattern: finds list-patterns.ail"
  committed examples-search

  call ailang-cli '{"op":"iface","path":"src/good.ail"}'
  is "$rc:$(jget exit_code)" "0:0" "ailang-cli iface: exit 0"
  is "$(jget stdout | python3 -c 'import json,sys; d=json.load(sys.stdin); print([(e["name"], e["arity"]) for e in d["exports"]])')" \
    "[('main', 1)]" "... the interface names main taking one argument"
  committed ailang-cli

  call ailang-cli '{"op":"version"}'
  is "$rc:$(jget exit_code)" "0:0" "ailang-cli version: exit 0"
  like "$(jget stdout)" '^AILANG-lite v' "... the tool interpreter's release"
  committed ailang-cli
fi

# session list: per grant what the episode spent (the journal's effect
# intents on that effect and scope) and what remains of its budget
run_capture lout lerr lrc "$WORLDD" session list --store "$DB" --json
is "$lrc" 0 "session list --json after the calls: exit 0"
is "$(printf '%s' "$lout" | python3 -c '
import json, sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
bad = []
spent_any = 0
for g in json.load(sys.stdin)[0]["grants"]:
    (s,) = db.execute("SELECT coalesce(sum(cost),0) FROM journal WHERE phase=? AND kind=? AND episode=? AND effect=? AND scope=?", ("intent", "effect", "ep1", g["effect"], g["scope"])).fetchone()
    if g.get("spent") != s or g.get("remaining") != g["budget"] - s: bad.append(g)
    spent_any += s
print("ok" if not bad and spent_any > 0 else "bad %r spent %d" % (bad, spent_any))' "$DB")" ok \
  "--json: every grant says spent (the journal's sum) and remaining = budget - spent, some spent"
run_capture lout lerr lrc "$WORLDD" session list --store "$DB"
rs=$(printf '%s' "$lout" | python3 -c '
import json, sys
print(sum(int(p.split("/spent=")[1].split("/")[0]) for p in sys.stdin.read().split(" grants=")[1].strip().split(",")))')
ws_=$(printf '%s' "$lout" | grep -oE 'Workspace.Write=worktree:100/spent=[0-9]+/remaining=[0-9]+')
like "$ws_" '^Workspace.Write=worktree:100/spent=[1-9][0-9]*/remaining=[0-9]+$' "text: EFFECT=SCOPE:BUDGET/spent=S/remaining=R ($ws_)"
ok $(( rs > 0 ? 0 : 1 )) "text: the spent budget adds up to $rs > 0"

run_capture sout serr src_rc "$WORLDD" scan --store "$DB"
is "$src_rc:$sout" "0:" "the store scans clean after $entries calls"
done_testing
