#!/bin/bash
# `worldd run --effectful --test-broker` applies the real broker's plan laws
# (issue 39 item 4; broker/plan.c, docs/design.md §5.2): a plan whose effect
# id breaks the effect-id law ("E1") is refused there with the same line and
# exit code (23) as a worldd call of the same source through the real
# broker, before anything is echoed; other laws likewise. Control: the same
# plan with a lawful id runs plan -> test broker -> finish.
. "$top_srcdir/tests/tap.sh"
T=$(mktemp -d /tmp/world-tbroker.XXXXXX); trap 'rm -rf "$T"' EXIT
FIX="$top_builddir/tests/packages/packages-fixture"
# plan ID PAYLOAD: a transition whose plan phase plans one Workspace.Read
# (worktree, cost 1) with effect id ID; its finish phase says it finished
plan() {
  python3 - "$1" "$2" <<'PY'
import json, sys
p = {"plan": "world/effect-plan/v1", "effects": [{"id": sys.argv[1], "effect": "Workspace.Read", "scope": "worktree",
     "cost": 1, "payload": json.loads(sys.argv[2])}], "finish": True, "result": None}
lit = json.dumps(json.dumps(p, separators=(",", ":")))  # an AILANG string literal of the plan's text
print("module law\nimport std/string (contains)\nexport func main(input: string) -> string {\n"
      "  if contains(input, \"\\\"phase\\\":\\\"plan\\\"\") then\n    " + lit + "\n"
      "  else\n    \"{\\\"finished\\\":true}\"\n}")
PY
}
plan E1 '{"path":"x.ail"}' > "$T/upper.ail"
plan e1 '{"path":"x.ail"}' > "$T/good.ail"
plan e1 '{"world":1}' > "$T/world.ail"
DECL='[{"effect":"Workspace.Read","scope":"worktree","cost":1}]'

# ---- the test broker
run_capture out err rc "$WORLDD" run --ailang-bin "$AILANG_LITE" --source "$T/good.ail" --effectful --test-broker
is "$rc:$err" "0:" "control: a lawful plan (effect id e1) runs plan -> test broker -> finish"
like "$out" '"finished":true,"output":\{"finished":true\}' "... the finish phase ran"
run_capture out err rc "$WORLDD" run --ailang-bin "$AILANG_LITE" --source "$T/upper.ail" --effectful --test-broker
is "$rc" 23 "effect id \"E1\": refused by the test broker, exit 23 (the plan-law exit)"
is "$err" "worldd run: plan law effect-id: effect id must match [a-z0-9]{1,16}" "... one line naming the law"
is "$out" "" "... nothing echoed, no finish phase"
run_capture out err rc "$WORLDD" run --ailang-bin "$AILANG_LITE" --source "$T/world.ail" --effectful --test-broker
is "$rc:$err" "23:worldd run: plan law no-world: payload has the reserved key \"world\"" "a payload with the reserved key \"world\": the no-world law, exit 23"
# the declared law against the declaredEffects given
run_capture out err rc "$WORLDD" run --ailang-bin "$AILANG_LITE" --source "$T/good.ail" --effectful --test-broker --declared-effects "$DECL"
is "$rc" 0 "control: --declared-effects naming the planned triple: runs"
run_capture out err rc "$WORLDD" run --ailang-bin "$AILANG_LITE" --source "$T/good.ail" --effectful --test-broker \
  --declared-effects '[{"effect":"Workspace.Read","scope":"worktree","cost":2}]'
is "$rc:$err" "23:worldd run: plan law declared: effect Workspace.Read scope worktree cost 1 is not one of the transition's declaredEffects" \
  "--declared-effects without the planned triple: the declared law, exit 23"
run_capture out err rc "$WORLDD" run --ailang-bin "$AILANG_LITE" --source "$T/good.ail" --effectful --test-broker --declared-effects '{}'
is "$rc" 2 "--declared-effects that is not an array of {effect,scope,cost}: usage"
run_capture out err rc "$WORLDD" run --ailang-bin "$AILANG_LITE" --source "$T/good.ail" --declared-effects "$DECL"
is "$rc" 2 "--declared-effects without --test-broker: usage"

# ---- the real broker: the same source through worldd call
printf '[{"id":"t.upper","transitionFnFile":"%s","inputSchema":{"type":"object"},"declaredEffects":%s},{"id":"t.world","transitionFnFile":"%s","inputSchema":{"type":"object"},"declaredEffects":%s}]\n' \
  "$T/upper.ail" "$DECL" "$T/world.ail" "$DECL" > "$T/m.json"
cred=$("$FIX" "$T" "$top_srcdir" ep1 "$T/m.json" Workspace.Read=worktree:10) || bail "fixture"
run_capture out err rc "$WORLDD" call --store "$T/world.db" --session "$cred" t.upper --json '{}'
is "$rc" 23 "worldd call of the same source: exit 23, as the test broker"
is "$err" "worldd call: plan law effect-id: effect id must match [a-z0-9]{1,16}" "... the same law line, word for word"
run_capture out err rc "$WORLDD" call --store "$T/world.db" --session "$cred" t.world --json '{}'
is "$rc" 23 "worldd call, the reserved key: exit 23, as the test broker"
is "$err" "worldd call: plan law no-world: payload has the reserved key \"world\"" "... the same law line, word for word"
done_testing
