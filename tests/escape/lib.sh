# tests/escape/lib.sh: shared helpers of the escape suite (sourced after
# tests/tap.sh). The suite itself is `worldd audit` (audit/audit.c, which
# makes the targets, runs the capsules and judges them); the tests only
# run it and read its JSON report.

PROBE="$top_builddir/audit/world-probe"
PY=${PYTHON3:-python3}
ESC_IS_ROOT=0
[ "$(id -u)" -eq 0 ] && ESC_IS_ROOT=1

# esc_audit_tap REPORT.json: one TAP assertion per row of a `worldd audit
# --json` report (the escape suite's judge is audit/audit.c; this only
# prints its verdicts): pass = ok, skip = SKIP with the reason, anything
# else (escaped, control failed, fail) = not ok with what was expected and
# observed.
esc_audit_tap() {
  local v d g
  while IFS=$'\t' read -r v d g; do
    case "$v" in
      pass) ok 0 "$d" ;;
      skip) skip "${g:-see the report}" "$d" ;;
      *) ok 1 "$v: $d"; [ -n "$g" ] && diag "$g" ;;
    esac
  done < <("$PY" - "$1" <<'PYEOF' 2>&1
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("fail\tthe audit printed a JSON report\t%s" % e)
    sys.exit(0)
for x in r["rows"]:
    c = " [control: %s]" % x["control"][:100] if "control" in x else ""
    d = "%s %s %s %s %s: %s%s" % (x["section"], x["profile"], x["user"], x["via"], x["attempt"], x["observed"][:160], c)
    g = "expected: %s; %s" % (x["expected"], x.get("detail", ""))
    print("%s\t%s\t%s" % (x["verdict"], d.replace("\t", " ").replace("#", "no."), g.replace("\t", " ")))
PYEOF
)
}

# esc_audit_rows REPORT.json EXPR: the rows for which the python expression
# EXPR (over the row x) is true, one "verdict section profile user via
# attempt" line each.
esc_audit_rows() {
  "$PY" -c '
import json, sys
for x in json.load(open(sys.argv[1]))["rows"]:
    if eval(sys.argv[2]): print(x["verdict"], x["section"], x["profile"], x["user"], x["via"], x["attempt"])
' "$1" "$2"
}

