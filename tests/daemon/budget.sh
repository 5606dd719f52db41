#!/bin/bash
# tests/daemon/budget.sh: a call whose effect the broker refused for budget
# is a refusal (issue 44 item 5): once a session's grant is spent the call
# answers isError:true, class BudgetExhausted, naming the effect, its scope,
# what is left and what it costs -- not isError:false with no "ok" and no
# reason. Controls: the calls within the budget answer isError:false, and a
# session whose grant names another scope is refused EffectDenied naming the
# label. A2A: the task fails, its text naming the refusal.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
daemon_setup
# tests.read: the plan phase of packages/se-tools/examples/effect-plan-read.ail,
# one Workspace.Read of args.path at cost 1, its result the handler's output
# (visible while the grant exists, access cost 0; the effect costs 1: as ailang-write is published)
FIXTURE_EFFECTFUL='{"cost":1,"effect":"Workspace.Read","scope":"worktree"}' \
  "$FIXTURE" publish "$DB" "$AILANG_LITE" tests.read "$top_srcdir/packages/se-tools/examples/effect-plan-read.ail" \
  '{"cost":0,"effect":"Workspace.Read","scope":"worktree"}' || bail "fixture publish tests.read"
TINY=$(printf '5%.0s' $(seq 64))
OTHER=$(printf '6%.0s' $(seq 64))
"$FIXTURE" session "$DB" "$TINY" ep-tiny '[{"budget":2,"effect":"Workspace.Read","scope":"worktree"}]' +3600 || bail "fixture session"
"$FIXTURE" session "$DB" "$OTHER" ep-other '[{"budget":2,"effect":"Workspace.Read","scope":"worktree"}]' +3600 || bail "fixture session"
mkdir -p "$T/ws/ep-tiny" "$T/ws/ep-other" && chmod 700 "$T/ws" "$T/ws/"*
echo hello > "$T/ws/ep-tiny/README.md"; echo hello > "$T/ws/ep-other/README.md"
daemon_start --workspace-root "$T/ws" || bail "worldd serve did not start"
call() { # CRED ID
  mcp "$1" "{\"jsonrpc\":\"2.0\",\"id\":$2,\"method\":\"tools/call\",\"params\":{\"name\":\"tests_dread\",\"arguments\":{\"path\":\"README.md\"}}}"
}
for i in 1 2; do
  call "$TINY" "$i"
  is "$STATUS:$(sse_json | jget result.isError):$(sse_json | jget 'result.structuredContent.world.effects.0.status')" "200:false:ok" \
    "control: call $i within the budget of 2: isError false, its effect ok"
done
call "$TINY" 3
R=$(sse_json)
is "$STATUS:$(jget result.isError <<<"$R"):$(jget 'result._meta.world/error.class' <<<"$R")" "200:true:BudgetExhausted" \
  "the third call, the grant spent: isError true, class BudgetExhausted"
like "$(jget 'result.content.0.text' <<<"$R")" '^BudgetExhausted: the budget of Workspace.Read on worktree is spent: 0 left, the effect costs 1' \
  "... its text names the budget: the effect, its scope, what is left and the cost"
is "$(jget 'result.structuredContent.world.effects.0.status' <<<"$R"):$(jget 'result._meta.world/invocation.entry_index' <<<"$R")" "denied:3" \
  "... the committed output keeps the denied effect (entry 3: the refusal is on the record)"
like "$(grep 'route=/mcp/ status=200' "$T/err" | tail -1)" 'invocation_id=mcp:ep-tiny:[0-9a-f]+ .*rpc=tools/call,error=BudgetExhausted' \
  "... and the request log names the invocation and the class"
call "$OTHER" 4
is "$(sse_json | jget result.isError)" false "control: another session's grant of the same effect is its own (isError false)"
# A2A: the same refusal makes the task failed, its text naming it
a2a() {
  http POST /a2a/ -H "$(auth "$1")" -H 'Content-Type: application/json' --data-binary \
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"message/send\",\"params\":{\"message\":{\"kind\":\"message\",\"messageId\":\"m$2\",\"role\":\"user\",\"parts\":[{\"kind\":\"data\",\"data\":{\"path\":\"README.md\"}}],\"metadata\":{\"skill_id\":\"tests.read\"}}}}"
}
a2a "$TINY" 5
like "$BODY" '"state":"failed".*EffectDenied: effect .* was refused by the broker' "A2A: the spent grant's call is a failed task naming the refusal"
daemon_stop
is "$DRC" 0 "the daemon stops cleanly"
done_testing
