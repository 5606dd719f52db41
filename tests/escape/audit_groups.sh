#!/bin/bash
# `worldd audit` as a caller who is not root and has supplementary groups
# (issue 39): the recommended non-root deployment. An unprivileged user
# namespace cannot drop them (setgroups is denied there), so inside the
# capsule each shows as the overflow gid 65534, but the caller's own gid --
# the one gid mapped in -- shows as the inside gid 1000 (docs/security.md
# §6). The posture check accepts exactly that list: `runuser -u nobody`
# (its groups from initgroups: its own gid) and `setpriv --groups` with one
# more group pass, exit 0. Control: the same caller and check against a
# stand-in that confines nothing (a test hook) sees the host's groups and
# fails, exit 28 -- the check is exact, not a pass for any list.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/escape/lib.sh"
if [ "$ESC_IS_ROOT" -ne 1 ] || ! command -v setpriv >/dev/null || ! command -v runuser >/dev/null; then
  for i in 1 2 3 4 5 6 7 8 9; do skip "needs root, setpriv and runuser to become uid 65534 with groups" "audit groups"; done
  done_testing
  exit 0
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/world-audit-groups.XXXXXX") || bail "mktemp failed"
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
W=$T/w   # the callers' working directory and TMPDIR: theirs
mkdir "$W" && chown 65534:65534 "$W" || bail "mkdir/chown $W"
grow() { esc_audit_rows "$1" "x['section']=='posture' and x['attempt']=='inside: supplementary groups'"; }
sorted() { "$PY" -c 'import json,sys; print(sorted(json.loads(sys.argv[1])))' "$1"; }
observed() { "$PY" -c 'import json,sys; print([x["observed"] for x in json.load(open(sys.argv[1]))["rows"] if x["attempt"]=="inside: supplementary groups"][0])' "$1"; }

# 1. The issue's command: runuser -u nobody (initgroups: [65534], its own gid).
(cd "$W" && TMPDIR="$W" runuser -u nobody -- "$WORLDD" audit transition --parts posture --json --quiet \
  >"$T/nobody.json" 2>"$T/nobody.err")
is "$?" 0 "runuser -u nobody: worldd audit exits 0 ($(head -c 300 "$T/nobody.err"))"
is "$(grow "$T/nobody.json" | awk '{print $1}')" pass "... its supplementary groups check passes"
is "$(sorted "$(observed "$T/nobody.json")")" "[1000]" "... the caller's own gid shows inside as the inside gid 1000"

# 2. One more supplementary group (100, unmapped): 65534 inside.
(cd "$W" && TMPDIR="$W" setpriv --reuid=65534 --regid=65534 --groups=100,65534 "$WORLDD" audit transition \
  --parts posture --json --quiet >"$T/more.json" 2>"$T/more.err")
is "$?" 0 "setpriv --groups=100,65534: worldd audit exits 0 ($(head -c 300 "$T/more.err"))"
is "$(grow "$T/more.json" | awk '{print $1}')" pass "... its supplementary groups check passes"
is "$(sorted "$(observed "$T/more.json")")" "[1000, 65534]" "... group 100 shows as 65534, the caller's gid as 1000"

# 3. Control: the same caller, no capsule -- the host's groups fail the check.
if grep -q -- '-DWORLD_TEST_HOOKS=1' "$top_builddir/Makefile"; then
  (cd "$W" && TMPDIR="$W" setpriv --reuid=65534 --regid=65534 --groups=100,65534 "$WORLDD" audit transition \
    --parts posture --unconfined-test "$top_srcdir/tests/escape/unconfined-run.sh" --json --quiet \
    >"$T/ctl.json" 2>"$T/ctl.err")
  is "$?" 28 "control, no capsule: exit 28"
  is "$(grow "$T/ctl.json" | awk '{print $1}')" fail "... the supplementary groups check fails"
  is "$(sorted "$(observed "$T/ctl.json")")" "[100, 65534]" "... on the host's groups, unmapped"
else
  for i in 1 2 3; do skip "built without --enable-test-hooks (--unconfined-test is a test hook)" "control"; done
fi
done_testing
