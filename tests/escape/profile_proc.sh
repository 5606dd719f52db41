#!/bin/bash
# What `worldd profile show --format json` prints is what a capsule is
# (issue 25 item 2): a capsule made as the daemon makes it (worldd audit
# --spawner --parts posture) is read from the host's /proc while the probe
# lingers in it -- the capsule has no /proc of its own, so /proc/PID is its
# /proc/self: status (Uid, CapInh/Prm/Eff/Bnd/Amb, NoNewPrivs, Seccomp,
# Seccomp_filters), uid_map/gid_map, ns/*, fd/, environ, mountinfo (each
# mount's type and flags, and no other mount), limits (every rlimit
# soft/hard) and cgroup -- and compared with the profile JSON that profile
# show printed (--expect FILE), for transition and tool-run, as root and as
# uid 65534. Control: the same capsules against a JSON with one value
# changed per layer fail exactly those checks (exit 28).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/escape/lib.sh"
if [ "$ESC_IS_ROOT" -ne 1 ]; then
  skip "needs root: the host reads another uid's /proc" "profile show against /proc of a capsule"; done_testing; exit
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/world-audit-test.XXXXXX") || bail "mktemp failed"
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
items="host: Uid|host: CapInh|host: CapPrm|host: CapEff|host: CapBnd|host: CapAmb|host: NoNewPrivs|host: Seccomp|host: Seccomp_filters|host: uid_map|host: gid_map|host: namespaces|host: fds|host: environ|host: mount /|host: mount /.capsule-cache|host: no other mount|host: limits"
for p in transition tool-run; do
  "$WORLDD" profile show "$p" --format json >"$T/$p.json" 2>"$T/show.err"
  ok $? "worldd profile show $p --format json ($(head -c 200 "$T/show.err"))"
  "$WORLDD" audit "$p" --spawner --parts posture --expect "$T/$p.json" --json --quiet >"$T/$p.report" 2>"$T/$p.err"
  is "$?" 0 "$p: the capsule's /proc is what profile show printed: exit 0 ($(head -c 300 "$T/$p.err"))"
  for u in root unpriv; do
    IFS='|'
    for it in $items; do
      [ "$it" = "host: Uid" ] && it="host: host uid"
      v=$(esc_audit_rows "$T/$p.report" "x['section']=='posture' and x['user']=='$u' and x['attempt']=='$it'" | awk '{print $1}')
      is "$v" pass "$p as $u: $it matches the profile"
    done
    unset IFS
  done
  v=$(esc_audit_rows "$T/$p.report" "x['section']=='posture' and x['user']=='root' and x['attempt']=='host: cgroups'" | awk '{print $1}')
  is "$v" pass "$p as root: the capsule is in its own memory and pids groups"
done
# every mount row names the type and the flags mountinfo shows
like "$("$PY" -c 'import json,sys; print([x["observed"] for x in json.load(open(sys.argv[1]))["rows"] if x["attempt"]=="host: mount /"][0])' "$T/transition.report")" \
  '^tmpfs ro,nosuid,nodev,noexec' "the root mount as mountinfo shows it: tmpfs ro,nosuid,nodev,noexec"

# Control: one value per layer changed in the JSON; those checks, and only
# those, fail.
"$PY" - "$T/transition.json" "$T/wrong.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["no_new_privs"] = False                                  # NoNewPrivs
d["rlimits"]["RLIMIT_NOFILE"]["soft"] += 1                 # limits
for m in d["mounts"]:
    if m["path"] == "/.capsule-cache":
        m["options"] = "ro" + m["options"][2:]             # mount /.capsule-cache: ro wanted, rw mounted
d["mounts"] = [m for m in d["mounts"] if m["path"] != "/args.json"]  # no other mount: one is not in the JSON
d["capabilities"] = "all (a wrong profile)"                # the Cap* checks no longer expect 0
d["environment"] = d["environment"][:-1]                   # environ
json.dump(d, open(sys.argv[2], "w"))
PYEOF
"$WORLDD" audit transition --spawner --parts posture --expect "$T/wrong.json" --json --quiet >"$T/wrong.report" 2>"$T/wrong.err"
is "$?" 28 "control: against a changed JSON the audit exits 28"
got=$(esc_audit_rows "$T/wrong.report" "x['section']=='posture' and x['user']=='root' and x['attempt'].startswith('host: ') and x['verdict']!='pass'" | awk '{$1=$2=$3=$4=$5=""; sub(/^ +/, ""); print}' | sort | tr '\n' '|')
like "$got" "host: NoNewPrivs\|" "control: the changed no_new_privs is caught (host: NoNewPrivs)"
like "$got" "host: limits\|" "control: the changed RLIMIT_NOFILE is caught (host: limits)"
like "$got" "host: mount /.capsule-cache\|" "control: the changed mount flags are caught"
like "$got" "host: no other mount\|" "control: a mount missing from the JSON is caught"
like "$got" "host: environ\|" "control: the changed environment is caught"
unlike "$got" "host: Seccomp|host: uid_map|host: fds" "control: the unchanged layers still pass ($got)"
done_testing
