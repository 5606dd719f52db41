#!/bin/bash
# packages/quickstart, packages/se-tools and packages/conformance (its
# fixtures run by tests/daemon/conformance.sh): every source passes
# `ailang-lite check` and its inline tests (`ailang-lite test`); every
# example program checks and carries its one-line comment; the JSON-level
# checks of tests/packages/packages.py: each plan phase, run as a capsule
# runs it, obeys the plan laws of docs/design.md §5.2 with the §5.4 payload, refuses
# unknown keys and unsafe paths with a lawful plan of no effect, the finish
# phases reshape real tool-interpreter output, and both manifests follow
# docs/design.md §7 (with controls showing the checkers can fail) and pass
# `world-publish check`; each tool also runs in a real capsule
# (`worldd invoke --effectful --test-broker`).
. "$top_srcdir/tests/tap.sh"
A=$AILANG_LITE_DIRECT
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$top_srcdir" || bail "cd $top_srcdir"

sources=(packages/quickstart/echo.ail packages/se-tools/*.ail packages/conformance/*.ail)
is "${#sources[@]}" 24 "twenty-four transition sources (echo, the nine tools, the fourteen conformance fixtures)"
for src in "${sources[@]}"; do
  run_capture out err rc "$A" check "$src"
  is "$rc" 0 "$src passes ailang-lite check"
  [ "$rc" = 0 ] || diag "$err"
  run_capture out err rc "$A" test "$src"
  passed=$(printf '%s\n' "$out" | tail -n1 | sed -n 's/^\([0-9]*\) passed, 0 failed$/\1/p')
  ok $(( rc == 0 && ${passed:-0} >= 1 ? 0 : 1 )) "$src passes its inline tests (${passed:-0})"
  [ "$rc" = 0 ] || printf '%s\n' "$out" | grep -v '^PASS' | sed 's/^/# /'
done
# control: a failing row is reported as a failure
sed 's/\\"op\\":\\"read\\",\\"path\\":\\"src\/a.ail\\"}}\],/\\"op\\":\\"read\\",\\"path\\":\\"src\/b.ail\\"}}],/' \
  packages/se-tools/ailang-read.ail > "$work/broken.ail"
run_capture out err rc "$A" test "$work/broken.ail"
is "$rc" 1 "control: a tool whose test row is wrong fails ailang-lite test"

examples=(packages/se-tools/examples/*.ail)
ok $(( ${#examples[@]} >= 24 ? 0 : 1 )) "a few dozen examples (${#examples[@]})"
bad=0 nocomment=0
for ex in "${examples[@]}"; do
  "$A" check --library "$ex" > /dev/null 2> "$work/err" || { bad=$((bad + 1)); diag "$ex: $(cat "$work/err")"; }
  "$A" test "$ex" > "$work/out" 2>&1 || { bad=$((bad + 1)); diag "$ex: $(grep -v '^PASS' "$work/out")"; }
  head -n1 "$ex" | grep -Eq '^-- [A-Za-z].{10,}' || { nocomment=$((nocomment + 1)); diag "$ex: no one-line comment"; }
done
is "$bad" 0 "every example passes ailang-lite check and its inline tests"
is "$nocomment" 0 "every example starts with a one-line comment saying what it shows"
printf 'export func main(input: string) -> string { nope }\n' > "$work/bad-example.ail"
"$A" check "$work/bad-example.ail" > /dev/null 2>&1
nok $? "control: an example with an undefined name fails the check"

# every manifest passes everything publishing checks (world-publish check:
# descriptors, ids, schemas, and each source in a source-check capsule
# under the static interpreter), when world-publish is built
WP=$top_builddir/cli/world-publish
for m in packages/quickstart/transitions.json packages/se-tools/transitions.json packages/conformance/transitions.json; do
  if [ -x "$WP" ]; then
    run_capture out err rc "$WP" check --manifest "$m" --ailang-bin "$AILANG_LITE"
    is "$rc" 0 "world-publish check accepts $m"
    [ "$rc" = 0 ] || diag "$out $err"
  else
    skip "cli/world-publish is not built" "world-publish check accepts $m"
  fi
done

# the JSON-level checks
python3 "$top_srcdir/tests/packages/packages.py" "$top_srcdir" "$A" "$work" "$WORLDD" "$AILANG_LITE" \
  > "$work/results" 2> "$work/py.err"
ok $? "tests/packages/packages.py ran to the end"
[ -s "$work/py.err" ] && sed 's/^/# /' "$work/py.err"
while IFS=$'\t' read -r status name why; do
  if [ "$status" = 2 ]; then skip "$why" "$name"; continue; fi
  ok "$status" "$name"
  [ "$status" = 0 ] || [ -z "$why" ] || diag "$why"
done < "$work/results"
done_testing
