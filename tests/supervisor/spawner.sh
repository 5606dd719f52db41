#!/bin/bash
# The supervisor suites again, with every capsule made by the capsule
# spawner (supervisor/spawner.h): SUPTEST_SPAWNER=1 makes suptest.h start
# the spawner before the first launcher and look for capsules under it.
# test_load with 300 runs each (CI time). Each suite's TAP lines are
# renumbered into this script's plan; a suite that fails or stops early
# fails here.
. "$top_srcdir/tests/tap.sh"
B="$top_builddir/tests/supervisor"
export SUPTEST_SPAWNER=1
suite() { # name, then the command
  local name=$1 line out rc n=0 plan=""
  shift
  out=$(mktemp)
  "$@" >"$out" 2>&1
  rc=$?
  while IFS= read -r line; do
    case "$line" in
      "ok "*" # SKIP "*) n=$((n + 1)); skip "${line##* # SKIP }" "$name: ${line#ok * - }" ;;
      "ok "*) n=$((n + 1)); ok 0 "$name: ${line#ok * - }" ;;
      "not ok "*) n=$((n + 1)); ok 1 "$name: ${line#not ok * - }" ;;
      1..*) plan=${line#1..} ;;
      "Bail out!"*) ok 1 "$name: $line" ;;
      *) echo "$line" | sed 's/^\([^#]\)/# \1/' ;;
    esac
  done <"$out"
  rm -f "$out"
  is "$plan" "$n" "$name: ran its whole plan"
  is "$rc" 0 "$name: exit status"
}
suite test_supervisor "$B/test_supervisor"
suite test_tool "$B/test_tool"
WORLD_SUP_RUNS=300 suite test_load "$B/test_load"
done_testing
