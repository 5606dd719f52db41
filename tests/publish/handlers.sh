#!/bin/bash
# world-publish refuses a declared effect no handler serves (issue 39 item
# 4): every call of such a transition would be refused before execution
# (coordinator/coordinator.c), so check and transitions refuse the
# descriptor, naming the effect and the effects that have a handler, read
# from the broker's one handler table (broker/handlers.c; this test reads
# the same table, so a handler added there is accepted here with no other
# change). Control: each served effect passes.
. "$top_srcdir/tests/tap.sh"
WP="$top_builddir/cli/world-publish"
T=$(mktemp -d /tmp/world-handlers.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || bail "cd $T"
printf 'module e\nexport func main(input: string) -> string { input }\n' > e.ail
# the effects of broker/handlers.c's table, in its order
mapfile -t SERVED < <(sed -n 's/^[[:space:]]*{ "\([A-Za-z0-9_.-]*\)", [A-Za-z0-9_]* },.*/\1/p' "$top_srcdir/broker/handlers.c")
ok "$([ "${#SERVED[@]}" -ge 6 ]; echo $?)" "broker/handlers.c's table read: ${#SERVED[@]} effects (${SERVED[*]})"
LIST=$(IFS=,; echo "${SERVED[*]}" | sed 's/,/, /g')
man() { # man FILE EFFECT [ACCESS-EFFECT]
  printf '[{"id":"t.e","transitionFnFile":"e.ail","access":%s,"declaredEffects":[{"effect":"%s","scope":"worktree","cost":1}]}]\n' \
    "${3:+{\"effect\":\"$3\",\"scope\":\"vault\",\"cost\":1\}}" "$2" > "$1"
  [ -n "$3" ] || sed -i 's/"access":,/"access":null,/' "$1"
}

man append.json Workspace.Append
run_capture out err rc "$WP" check --manifest append.json --ailang-bin "$AILANG_LITE"
is "$rc" 3 "check: a declared effect no handler serves (Workspace.Append): exit 3"
is "$out" "refused entry \"t.e\": declaredEffects[0]: effect \"Workspace.Append\" is served by no handler (effects with a handler: $LIST)
0 of 1 descriptor(s) would publish" "... one line naming the effect and every effect that has a handler"

"$WORLDD" epoch bootstrap --store w.db --ailang-bin "$AILANG_LITE" > /dev/null || bail "epoch bootstrap"
sum() { cat w.db w.db-wal 2>/dev/null | sha256sum | cut -d' ' -f1; }
b=$(sum)
run_capture out err rc env -u CI -u GITHUB_ACTIONS "$WP" transitions --store w.db --manifest append.json --ailang-bin "$AILANG_LITE"
is "$rc" 3 "transitions: refused too, before the attended step (exit 3)"
is "$(printf '%s' "$err" | sed -n 1p)" "world-publish transitions: entry \"t.e\": declaredEffects[0]: effect \"Workspace.Append\" is served by no handler (effects with a handler: $LIST)" "... the same line"
is "$(sum)" "$b" "... nothing written"

man lower.json workspace.read
run_capture out err rc "$WP" check --manifest lower.json --ailang-bin "$AILANG_LITE"
is "$rc" 3 "effect names are exact: workspace.read is not Workspace.Read"

# control: every effect of the table passes (read from the table, not a copy)
for eff in "${SERVED[@]}"; do
  man served.json "$eff"
  run_capture out err rc "$WP" check --manifest served.json --ailang-bin "$AILANG_LITE"
  is "$rc:$(printf '%s' "$out" | sed -n '$p')" "0:1 of 1 descriptor(s) would publish" "control: declared effect $eff (served) would publish"
done
# access names a grant that makes the tool visible, which no handler runs
# (tests/daemon/stream.sh publishes one gated by Secret.Read): not checked
man access.json Workspace.Read Secret.Read
run_capture out err rc "$WP" check --manifest access.json --ailang-bin "$AILANG_LITE"
is "$rc" 0 "an access grant with no handler (Secret.Read) is not refused: access gates visibility, it runs nothing"
done_testing
