#!/bin/bash
# Escape suite through the daemon's capsule maker: `worldd audit --spawner`
# makes every capsule as worldd serve does (a capsule spawner; as root the
# shared empty network namespace and the template mount namespace), for the
# profiles the daemon runs (transition, tool-run), as root and as uid 65534.
# One TAP assertion per row of its report. See docs/escape-suite.md.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/escape/lib.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/world-audit-test.XXXXXX") || bail "mktemp failed"
trap 'rm -rf "$T"' EXIT
"$WORLDD" audit transition tool-run --spawner --json --quiet >"$T/report.json" 2>"$T/err"
rc=$?
esc_audit_tap "$T/report.json"
is "$rc" 0 "worldd audit --spawner exits 0 ($(head -c 300 "$T/err"))"
n=$(esc_audit_rows "$T/report.json" "x['section'] in ('attempt','posture','resource') and x['profile']!='-' and x['via']!='spawner'" | wc -l)
is "$n" 0 "every capsule row was made by the spawner"
n=$(esc_audit_rows "$T/report.json" "x['section']=='attempt' and x['profile']=='transition'" | wc -l)
[ "$n" -ge 60 ]; ok $? "transition: $n attempt rows through the spawner"
done_testing
