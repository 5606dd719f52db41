#!/bin/bash
# Escape suite: `worldd audit`, the reviewer's command, is the suite. Every
# profile, as root and as uid 65534 where the test runs as root (the
# user-namespace path), capsules made by worldd run: the posture from inside
# and from the host's /proc against the profile, every escape attempt in its
# own capsule beside its unconfined control, the resource attempts, a tool
# run's read-only worktree, the host left as it was. One TAP assertion per row of its JSON report, then the
# report's shape and exit code. See docs/escape-suite.md.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/escape/lib.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/world-audit-test.XXXXXX") || bail "mktemp failed"
trap 'rm -rf "$T"' EXIT
"$WORLDD" audit --json --quiet >"$T/report.json" 2>"$T/err"
rc=$?
esc_audit_tap "$T/report.json"
is "$rc" 0 "worldd audit exits 0: nothing escaped, every control got through ($(head -c 300 "$T/err"))"
summary=$("$PY" -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; print(s["ok"], s["escaped"], s["control_failed"], s["fail"])' "$T/report.json" 2>&1)
is "$summary" "True 0 0 0" "the report's summary: ok, 0 escaped, 0 controls failed, 0 other failures"
users="root unpriv"; [ "$ESC_IS_ROOT" -eq 1 ] || users=self
for p in transition tool-run source-check; do
  for u in $users; do
    n=$(esc_audit_rows "$T/report.json" "x['section']=='attempt' and x['profile']=='$p' and x['user']=='$u'" | wc -l)
    [ "$n" -ge 60 ]; ok $? "$p as $u: $n attempt rows (every attempt of the probe)"
    n=$(esc_audit_rows "$T/report.json" "x['section']=='posture' and x['profile']=='$p' and x['user']=='$u' and x['verdict']=='pass'" | wc -l)
    [ "$n" -ge 12 ]; ok $? "$p as $u: $n posture checks passed"
  done
done
# tool-run's worktree (/work, read-only): its eight attempts and the
# unchanged check, per user, and its three controls
for u in $users; do
  n=$(esc_audit_rows "$T/report.json" "x['section']=='attempt' and x['profile']=='tool-run' and x['user']=='$u' and x['attempt'].startswith('worktree: ') and x['verdict']=='pass'" | wc -l)
  is "$n" 9 "tool-run as $u: the worktree's 8 attempts and its unchanged check pass"
done
n=$(esc_audit_rows "$T/report.json" "x['section']=='control' and x['attempt'].startswith('worktree: ') and x['verdict']=='pass'" | wc -l)
is "$n" 4 "the worktree's controls got through (write into it, its symlink and .. reach the host secret)"
# each attempt row names its control's result (or the reason it has none)
n=$(esc_audit_rows "$T/report.json" "x['section']=='attempt' and x['attempt'] not in ('batch','cgroups') and ':' not in x['attempt'] and not x.get('control')" | wc -l)
is "$n" 0 "every attempt row carries its control's observation"
# every row has the four fields of the issue
n=$("$PY" -c 'import json,sys; print(sum(1 for x in json.load(open(sys.argv[1]))["rows"] if not all(k in x for k in ("attempt","expected","observed","verdict"))))' "$T/report.json")
is "$n" 0 "every row has attempt, expected, observed and a verdict"
# A caller who is not root gets the audit of its own path: capsules as
# itself, the privileged controls skipped with the reason, exit 0.
if [ "$ESC_IS_ROOT" -eq 1 ] && command -v setpriv >/dev/null; then
  chmod 755 "$T"
  (cd "$T" && setpriv --reuid=65534 --regid=65534 --clear-groups "$WORLDD" audit transition --parts attempts \
    --attempts keyctl,host_etc_passwd,ptrace_host --json --quiet >"$T/self.json" 2>"$T/self.err")
  is "$?" 0 "as uid 65534, worldd audit exits 0 ($(head -c 300 "$T/self.err"))"
  is "$(esc_audit_rows "$T/self.json" "x['section'] in ('attempt','control') and x['user']!='self'" | wc -l)" 0 \
    "... every capsule and control as the caller itself (user self)"
  is "$(esc_audit_rows "$T/self.json" "x['section']=='control' and x['attempt']=='ptrace_host'" | awk '{print $1}')" skip \
    "... the control that needs root is skipped, not passed"
  is "$(esc_audit_rows "$T/self.json" "x['section']=='attempt' and x['attempt'] in ('keyctl','host_etc_passwd','ptrace_host')" | awk '{print $1}' | sort | uniq -c | tr -s ' ')" \
    " 3 pass" "... and its three attempts are blocked"
else
  for i in 1 2 3 4; do skip "needs root and setpriv to become uid 65534" "worldd audit as a caller who is not root"; done
fi
done_testing
