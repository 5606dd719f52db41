#!/bin/bash
# The control of the audit itself: `worldd audit` can fail, loudly, naming
# what failed. (1) Pointed at a stand-in for `worldd run` that confines
# nothing (tests/escape/unconfined-run.sh, a test-hook flag), every attempt
# is an escape and the posture checks of ids, capabilities, no_new_privs and
# seccomp fail: exit 28, each named in the text and the JSON report. (2) A
# probe that can never succeed (it answers "blocked" to everything, even
# unconfined) fails every control: exit 28, "control failed" naming each
# attempt. (3) A probe that does not answer at all is a set-up failure
# (exit 10), never a pass. (4) Interrupted, it ends and removes everything
# it started (exit 1). (5) Usage: an unknown profile (4), --expect
# without one profile (2). See docs/escape-suite.md.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/escape/lib.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/world-audit-test.XXXXXX") || bail "mktemp failed"
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
meta=host_etc_passwd,host_secret_file,dotdot_cwd,proc_self,net_tcp_host,pid_namespace,caps_held,no_new_privs,seccomp_mode,keyctl
n_meta=$(echo "$meta" | tr ',' '\n' | grep -c .)

if grep -q -- '-DWORLD_TEST_HOOKS=1' "$top_builddir/Makefile"; then
  "$WORLDD" audit --unconfined-test "$top_srcdir/tests/escape/unconfined-run.sh" --attempts "$meta" --json --quiet \
    >"$T/standin.json" 2>"$T/standin.err"
  is "$?" 28 "no capsule: worldd audit exits 28 ($(head -c 200 "$T/standin.err"))"
  got=$(esc_audit_rows "$T/standin.json" "x['section']=='attempt' and x['verdict']=='escaped'" | awk '{print $6}' | sort | tr '\n' ,)
  want=$(echo "$meta" | tr ',' '\n' | sort | tr '\n' ,)
  is "$got" "$want" "no capsule: each of the $n_meta attempts is reported escaped, by name"
  for item in "inside: uid/gid" "inside: capabilities" "inside: no_new_privs" "inside: seccomp mode" "inside: root directory" "inside: rlimits"; do
    v=$(esc_audit_rows "$T/standin.json" "x['section']=='posture' and x['attempt']=='$item'" | awk '{print $1}')
    is "$v" fail "no capsule: the posture check '$item' fails"
  done
  "$WORLDD" audit --unconfined-test "$top_srcdir/tests/escape/unconfined-run.sh" --attempts keyctl,host_etc_passwd \
    --parts attempts --quiet >"$T/standin.txt" 2>&1
  is "$?" 28 "no capsule, text report: exit 28"
  like "$(cat "$T/standin.txt")" "ESCAPED +attempt +transition .*keyctl: open: add_key" "the text report names keyctl as ESCAPED with what got through"
  like "$(cat "$T/standin.txt")" "ESCAPED +attempt +transition .*host_etc_passwd: open: read" "... and host_etc_passwd"
  like "$(cat "$T/standin.txt")" "NOT OK" "... and ends NOT OK"
else
  for i in 1 2 3 4 5 6 7 8 9 10 11 12; do skip "built without --enable-test-hooks (--unconfined-test is a test hook)" "the audit against a stand-in that confines nothing"; done
fi

# A probe that can never succeed: every control fails, so no "blocked"
# counts. It lists the real attempts and answers blocked to everything.
cat >"$T/liar" <<EOS
#!/bin/bash
case "\$1" in
  list) exec '$top_builddir/audit/world-probe' list ;;
  control) echo "\$2: blocked: this probe never tries" >&2; exit 1 ;;
  serve) exec '$top_builddir/audit/world-probe' "\$@" ;;
  *) echo '{}'; exit 0 ;;
esac
EOS
chmod 755 "$T/liar"
"$WORLDD" audit transition --probe "$T/liar" --attempts keyctl,host_etc_passwd --parts attempts --json --quiet \
  >"$T/liar.json" 2>"$T/liar.err"
is "$?" 28 "a probe that never gets through: exit 28 ($(head -c 200 "$T/liar.err"))"
got=$(esc_audit_rows "$T/liar.json" "x['section']=='control' and x['verdict']=='control failed'" | awk '{print $NF}' | sort -u | tr '\n' ,)
is "$got" "host_etc_passwd,keyctl," "... every control failed, by name"
got=$(esc_audit_rows "$T/liar.json" "x['section']=='attempt' and x['attempt'] in ('keyctl','host_etc_passwd') and x['verdict']=='pass'" | wc -l)
is "$got" 0 "... and its empty answers inside the capsule pass nothing"

# A probe that does not run at all is a set-up failure, not a report.
printf '#!/bin/sh\nexit 1\n' >"$T/dead" && chmod 755 "$T/dead"
run_capture out err rc "$WORLDD" audit --probe "$T/dead" --quiet
is "$rc" 10 "a probe that does not list its attempts: exit 10"
like "$err" "^worldd audit: audit setup: the probe.s listener \(.*dead serve .*\) exited with status 1 before it was ready$" "... one line naming the probe and what failed"
is "$out" "" "... and no report"

# Interrupted (SIGTERM mid-run): exit 1, one line, and nothing it started
# is left -- no process running from its directory, no directory.
mkdir -p "$T/tmpdir" && chmod 755 "$T/tmpdir"
TMPDIR="$T/tmpdir" "$WORLDD" audit transition --parts attempts >"$T/int.out" 2>"$T/int.err" &
apid=$!
for i in $(seq 1 200); do grep -q 'transition as root' "$T/int.err" && break; sleep 0.05; done
sleep 0.3
kill -TERM "$apid"
wait "$apid"
is "$?" 1 "SIGTERM mid-run: exit 1"
like "$(tail -n1 "$T/int.err")" "^worldd audit: interrupted \(signal 15\)" "... one line saying so"
left=$(for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' <"$f" 2>/dev/null | grep -q "$T/tmpdir" && echo "${f#/proc/}"; done)
is "$left" "" "... no process started from its directory is left"
is "$(ls -A "$T/tmpdir")" "" "... and its directory is removed"

# As root, a TMPDIR that uid 65534 cannot reach would fail the whole
# unprivileged pass: refused at set-up, naming the directory, nothing left.
if [ "$ESC_IS_ROOT" -eq 1 ]; then
  mkdir -p "$T/closed" && chmod 700 "$T/closed"
  run_capture out err rc env TMPDIR="$T/closed" "$WORLDD" audit --quiet
  is "$rc" 10 "TMPDIR not searchable by uid 65534: exit 10"
  like "$err" "^worldd audit: audit setup: $T/closed \(mode 0700\) is not searchable by uid 65534" "... one line naming it"
  is "$(ls -A "$T/closed")" "" "... and nothing left in it"
else
  for i in 1 2 3; do skip "as root only (the uid 65534 pass)" "a TMPDIR uid 65534 cannot reach"; done
fi

run_capture out err rc "$WORLDD" audit nosuch --quiet
is "$rc" 4 "an unknown profile: exit 4"
like "$err" "profile 'nosuch' not found" "... named"
run_capture out err rc "$WORLDD" audit --expect "$T/liar" --quiet
is "$rc" 2 "--expect without exactly one PROFILE: usage (2)"
done_testing
