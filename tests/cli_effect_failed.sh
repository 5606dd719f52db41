#!/bin/bash
# A failed effect is explained (issue 24, item 6): an effectful call with no
# --workspace-root commits the effect as
# failed with the handler's reason in the effect record (field failure) and
# in the output's world block, the provenance walk verifies both, and
# `worldd call` exits 27 naming the effect and the reason on its one stderr
# line; a root that does not exist is refused before the effect, named. Control: with the workspace root the same call succeeds (exit 0, no
# failure anywhere).
. "$top_srcdir/tests/tap.sh"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
FIX="$top_builddir/tests/packages/packages-fixture"
mkdir -p "$T/ws/ep1"
printf 'module x\n' > "$T/ws/ep1/x.ail"
cred=$("$FIX" "$T" "$top_srcdir" ep1 "$top_srcdir/packages/se-tools/transitions.json" Workspace.Read=worktree:10) ||
  bail "fixture"
DB=$T/world.db
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

run_capture out err rc "$WORLDD" call --store "$DB" --session "$cred" ailang-read --json '{"path":"x.ail"}'
is "$rc" 27 "no --workspace-root: the effect failed, exit 27"
like "$err" '^worldd call: committed entry 1 \(invocation [^)]*\); effect e1 failed: Workspace.Read: workspace: no workspace root configured \(--workspace-root\)$' \
  "one stderr line names the effect and the handler's reason"
is "$(printf '%s' "$out" | field 'd["world"]["effects"][0]["status"]')" failed "the output's world block says failed"
like "$(printf '%s' "$out" | field 'd["world"]["effects"][0]["failure"]')" "no workspace root configured" "... and why"
rec=$(printf '%s' "$out" | field 'd["world"]["effects"][0]["record"]')
run_capture robj rerr rrc "$WORLDD" object get --store "$DB" --payload "$rec"
like "$(printf '%s' "$robj" | field 'd["failure"]')" "no workspace root configured" "the effect record carries the reason (failure)"
is "$(printf '%s' "$robj" | field 'd["failed"], d["resultRef"], d["budgetBefore"] - d["budgetAfter"]')" "(True, None, 1)" \
  "the record: failed, no result, the budget charged"
run_capture wout werr wrc "$WORLDD" why --store "$DB" 1
is "$wrc" 0 "the provenance walk verifies the entry, record and world block ($(printf '%s' "$wout" | tail -1))"

# a workspace root that does not exist stops the call before the effect, named
run_capture out err rc "$WORLDD" call --store "$DB" --session "$cred" --workspace-root "$T/absent" ailang-read --json '{"path":"x.ail"}'
is "$rc" 9 "a workspace root that does not exist: exit 9 (I/O), before the effect"
like "$err" "^worldd call: effect turn: mkdir $T/absent/.world-turns: No such file or directory\$" "... one line naming the path"
run_capture o2 e2 r2 "$WORLDD" log get --store "$DB" 2
is "$r2" 4 "... and nothing committed (no entry 2)"

# control: the same call with the workspace root succeeds
run_capture out err rc "$WORLDD" call --store "$DB" --session "$cred" --workspace-root "$T/ws" ailang-read --json '{"path":"x.ail"}'
is "$rc" 0 "control: with --workspace-root the call succeeds ($err)"
is "$(printf '%s' "$out" | field 'd["world"]["effects"][0]["status"], "failure" in d["world"]["effects"][0]')" "('ok', False)" \
  "control: status ok, no failure field"
unlike "$err" "failed" "control: the stderr line names no failure"
# worldd serve with effectful transitions published and no --workspace-root
# refuses at start, before it writes anything
count() { [ -n "$SQLITE3_SHELL" ] && "$SQLITE3_SHELL" "$DB" 'select (select count(*) from objects) || "/" || (select count(*) from log_entries)' 2>/dev/null; }
before=$(count)
run_capture out err rc "$WORLDD" serve --store "$DB" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0
is "$rc" 2 "serve without --workspace-root: refused at start (usage)"
like "$err" '^worldd serve: [0-9]+ published transition\(s\) have effects that need a worktree \(first: [a-z-]+ declares [A-Za-z.]+\): give --workspace-root DIR$' \
  "... in one line naming a transition and its effect"
is "$(count)" "$before" "... and nothing was written to the store"
# control: with --workspace-root it serves (stopped with SIGTERM)
"$WORLDD" serve --store "$DB" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 --workspace-root "$T/ws" > "$T/serve.out" 2> "$T/serve.err" &
dp=$!
for _ in $(seq 1 400); do grep -q '^worldd listening on ' "$T/serve.out" 2>/dev/null && break; kill -0 "$dp" 2>/dev/null || break; sleep 0.05; done
like "$(cat "$T/serve.out")" '^worldd listening on http://127\.0\.0\.1:[0-9]+' "control: with --workspace-root the daemon starts"
kill -TERM "$dp" 2>/dev/null; wait "$dp"
is "$?" 0 "control: ... and stops cleanly on SIGTERM"
done_testing
