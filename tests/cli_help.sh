#!/bin/bash
# worldd --help lists verbs and exit codes; an unknown verb is a usage error.
. "$top_srcdir/tests/tap.sh"
run_capture out err rc "$WORLDD" --help
is "$rc" 0 "worldd --help exits 0"
like "$out" "exit codes" "worldd --help lists exit codes"
run_capture out err rc "$WORLDD" no-such-verb
is "$rc" 2 "unknown verb exits 2 (usage)"
like "$err" "^worldd: unknown verb 'no-such-verb'" "unknown verb named on one line"
done_testing
