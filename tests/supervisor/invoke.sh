#!/bin/bash
# worldd invoke / worldd source check (aliases of worldd run / worldd check):
# the supervisor from the command line,
# in capsules, with ailang-lite (docs/design.md §2's echo) and the stub interpreter
# for the failure cases. Each outcome has its exit code and one-line error.
. "$top_srcdir/tests/tap.sh"
STUB="$top_builddir/tests/supervisor/stub-interp"
T=$(mktemp -d /tmp/world-sup-invoke.XXXXXX)
trap 'rm -rf "$T"' EXIT
cat > "$T/echo.ail" <<'AIL'
module echo
export func main(input: string) -> string { "{\"echo\":${input}}" }
AIL
cat > "$T/eff.ail" <<'AIL'
module eff
import std/string (contains)
export func main(input: string) -> string {
  if contains(input, "\"phase\":\"plan\"") then
    "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"e1\",\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1,\"payload\":{\"n\":1}}],\"finish\":true,\"result\":null}"
  else
    "{\"finished\":${input}}"
}
AIL
printf 'module bad\nimport world/secrets (get)\nexport func main(input: string) -> string { input }\n' > "$T/bad.ail"

run_capture out err rc "$WORLDD" invoke --ailang-bin "$AILANG_LITE" --source "$T/echo.ail" --input '{"message":"hello"}'
is "$rc" 0 "echo through the supervisor: exit 0"
is "$out" '{"echo":{"message":"hello"}}' "echo output printed"
run_capture out err rc "$WORLDD" invoke --ailang-bin "$AILANG_LITE" --source "$T/echo.ail" --summary
like "$err" "profile transition:" "--summary prints the profile"
like "$err" "seccomp +default deny" "... its seccomp posture"
like "$err" "supervisor +deadlines plan 4000 ms, finish 2000 ms, pure 4000 ms, check 10000 ms, whole call 20000 ms" "... the supervisor's limits"
like "$err" "applied +.*seccomp" "... and what was applied"

run_capture out err rc "$WORLDD" invoke --ailang-bin "$AILANG_LITE" --source "$T/eff.ail" --input '{"k":2}' --effectful --test-broker
is "$rc" 0 "effectful call with the test broker: exit 0"
like "$out" '"finished":true' "the finish phase ran"
like "$out" '"finished":\{"phase":"finish","args":\{"k":2\},"results":\[\{"id":"e1","effect":"Test.Echo","status":"ok"' "finish input carries args and results"

run_capture out err rc "$WORLDD" source check --ailang-bin "$AILANG_LITE" --source "$T/bad.ail"
is "$rc" 19 "a world/* import is refused: exit 19"
like "$err" "^worldd source check: source refused: Error: LDR001 at $T/bad.ail:2:8: .*world/secrets$" "refusal names LDR001, the module and the file given, one line"
run_capture out err rc "$WORLDD" source check --ailang-bin "$AILANG_LITE" --source "$T/echo.ail"
is "$rc" 0 "a plain source is accepted"

run_capture out err rc "$WORLDD" invoke --ailang-bin "$AILANG_LITE" --source "$T/echo.ail" --input '[1]'
is "$rc" 3 "args that are not an object: exit 3"
run_capture out err rc "$WORLDD" invoke --ailang-bin "$AILANG_LITE" --source "$T/nope.ail"
is "$rc" 4 "missing source: exit 4"
run_capture out err rc "$WORLDD" invoke --ailang-bin "$AILANG_LITE" --source "$T/echo.ail" --effectful
is "$rc" 2 "--effectful without --test-broker: usage"
run_capture out err rc "$WORLDD" invoke --ailang-bin "$AILANG_LITE" --source "$T/echo.ail" --ailang-ref sha256:0000000000000000000000000000000000000000000000000000000000000000
is "$rc" 15 "wrong --ailang-ref: exit 15, nothing runs"

printf 'spin\n' > "$T/spin.ail"
run_capture out err rc "$WORLDD" invoke --ailang-bin "$STUB" --source "$T/spin.ail" --timeout-ms 500
is "$rc" 11 "spinning interpreter: exit 11"
like "$err" "pure run phase deadline \(500 ms\) passed; capsule killed" "deadline message"
printf 'flood-stderr\n' > "$T/flood.ail"
run_capture out err rc "$WORLDD" invoke --ailang-bin "$STUB" --source "$T/flood.ail"
is "$rc" 12 "stderr flood: exit 12"
printf 'fail\n' > "$T/fail.ail"
run_capture out err rc "$WORLDD" invoke --ailang-bin "$STUB" --source "$T/fail.ail"
is "$rc" 14 "interpreter failure: exit 14"
like "$err" "RT001" "... with its first stderr line"
done_testing
