# tests/escape/lib.sh: shared setup of the escape suite (sourced after
# tests/tap.sh). The suite itself is `worldd audit` (audit/audit.c): the
# audit tests turn its report into TAP (esc_audit_tap); worktree.sh still
# makes its own targets with esc_setup.
#
# esc_setup makes a private work directory with the host-side targets of the
# attempts: a listener (probe serve: TCP, UDP, abstract and path unix sockets,
# a SysV shm segment), two sleeping victim processes, a secret file and a
# world-writable directory (so that only the confinement, never a file
# permission, stops the confined attempts). esc_params prints the JSON the
# probe gets. esc_snapshot records what the host looks like, so the test can
# prove it left the host as it found it. Everything started here is killed by
# its pid in esc_cleanup.

PROBE="$top_builddir/audit/world-probe"
PY=${PYTHON3:-python3}
ESC_IS_ROOT=0
[ "$(id -u)" -eq 0 ] && ESC_IS_ROOT=1
ESC_PIDS=""

esc_setup() {
  [ -x "$PROBE" ] || bail "probe not built: $PROBE"
  command -v "$PY" >/dev/null 2>&1 || bail "python3 is needed by the escape suite (scripts/install-deps.sh)"
  ESC_WORK=$(mktemp -d "${TMPDIR:-/tmp}/world-escape.XXXXXX") || bail "mktemp failed"
  chmod 755 "$ESC_WORK"
  trap esc_cleanup EXIT
  # the probe and its "source", readable by an unprivileged worldd too
  cp "$PROBE" "$ESC_WORK/probe" && chmod 755 "$ESC_WORK/probe" || bail "cannot copy the probe"
  ESC_BIN="$ESC_WORK/probe"
  printf -- '-- escape probe: the interpreter ignores this source\nmodule main\n' >"$ESC_WORK/main.ail"
  chmod 644 "$ESC_WORK/main.ail"
  ESC_SRC="$ESC_WORK/main.ail"
  mkdir -p "$ESC_WORK/serve" "$ESC_WORK/hostdir" "$ESC_WORK/scratch" "$ESC_WORK/tmp"
  chmod 777 "$ESC_WORK/hostdir" "$ESC_WORK/scratch"
  chmod 755 "$ESC_WORK/serve"
  chmod 1777 "$ESC_WORK/tmp"
  ESC_SECRET="$ESC_WORK/secret.txt"
  echo "host secret $$" >"$ESC_SECRET" && chmod 644 "$ESC_SECRET"
  ESC_TAG=$(printf '%04x%04x' $RANDOM $RANDOM)

  "$PROBE" serve "$ESC_WORK/serve" </dev/null >"$ESC_WORK/serve.log" 2>&1 &
  ESC_SERVE_PID=$!
  esc_track "$ESC_SERVE_PID"
  local i
  for i in $(seq 1 100); do
    [ -f "$ESC_WORK/serve/serve.env" ] && break
    sleep 0.05
  done
  [ -f "$ESC_WORK/serve/serve.env" ] || bail "probe serve did not start: $(cat "$ESC_WORK/serve.log")"
  # shellcheck disable=SC1091
  . "$ESC_WORK/serve/serve.env"
  chmod 755 "$ESC_WORK/serve"
  ESC_VICTIM=$(esc_sleeper)
  ESC_KILLME=$(esc_sleeper)
  esc_track "$ESC_VICTIM"
  esc_track "$ESC_KILLME"
  ESC_HOST_NS="mnt:$(stat -L -c %i /proc/self/ns/mnt),uts:$(stat -L -c %i /proc/self/ns/uts),pid:$(stat -L -c %i /proc/self/ns/pid)"
  export WORLD_ESCAPE_HOST_NS="$ESC_HOST_NS"
}

# A sleeping victim, started from a subshell so that it is not a job of this
# shell (its death is then reaped by init and not reported here); killed by
# pid in esc_cleanup.
esc_sleeper() {
  sleep 600 </dev/null >/dev/null 2>&1 &
  echo $!
}

# esc_params [KEY=JSONVALUE...]: the probe's input object.
esc_params() {
  local extra="" kv
  for kv in "$@"; do extra="$extra,\"${kv%%=*}\":${kv#*=}"; done
  printf '{"tcp_port":%s,"udp_port":%s,"abstract":"%s","unix_path":"%s","shm_id":%s,"victim_pid":%s,"kill_pid":%s,"host_file":"%s","host_dir":"%s","tag":"%s"%s}' \
    "$TCP_PORT" "$UDP_PORT" "$ABSTRACT" "$UNIX_PATH" "$SHM_ID" "$ESC_VICTIM" "$ESC_KILLME" \
    "$ESC_SECRET" "$ESC_WORK/hostdir" "$ESC_TAG" "$extra"
}

# What the host looks like: mounts, hostname, reboot setting, the clock's
# offset from boot time (a stepped clock moves it), SysV segments, files of
# the host directory, and the processes carrying our tag.
esc_snapshot() {
  {
    echo "== mounts"
    awk '{print $5, $(NF-2), $(NF-1)}' /proc/self/mountinfo | sort
    echo "== hostname"
    cat /proc/sys/kernel/hostname
    echo "== ctrl-alt-del"
    cat /proc/sys/kernel/ctrl-alt-del 2>/dev/null
    echo "== domainname"
    cat /proc/sys/kernel/domainname
    echo "== hostdir"
    ls -A "$ESC_WORK/hostdir"
    echo "== tagged processes"
    esc_tagged_pids
  }
}

# Realtime minus boot time, in seconds: a clock step changes it; NTP
# slewing moves it by milliseconds at most during a test.
esc_clock_offset() {
  "$PY" -c 'import time; print("%.3f" % (time.clock_gettime(time.CLOCK_REALTIME) - time.clock_gettime(time.CLOCK_BOOTTIME)))'
}

# esc_clock_same BEFORE AFTER: the offsets differ by less than half a second.
esc_clock_same() {
  awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d < 0.5) }'
}

# Processes whose command line carries our tag (the probe writes
# "escprobe:TAG" over its argv; forked attempts inherit it).
esc_tagged_pids() {
  local f p
  for f in /proc/[0-9]*/cmdline; do
    p=${f#/proc/}; p=${p%/cmdline}
    if { tr '\0' ' ' <"$f"; } 2>/dev/null | grep -q "escprobe:$ESC_TAG"; then echo "$p"; fi
  done
}

# Alive = exists and is not a zombie (kill -0 succeeds on a zombie too).
esc_alive() {
  local s
  s=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)
  [ -n "$s" ] && [ "$s" != Z ]
}

# esc_dies PID: true once PID is gone or a zombie, waiting up to 3 s.
esc_dies() {
  local i
  for i in $(seq 1 60); do
    esc_alive "$1" || return 0
    sleep 0.05
  done
  return 1
}

# Processes we started are remembered as PID:STARTTIME, so that cleanup never
# signals a recycled pid (a victim a control killed may be long gone).
esc_starttime() { awk '{print $22}' "/proc/$1/stat" 2>/dev/null; }
esc_track() { ESC_PIDS="$ESC_PIDS $1:$(esc_starttime "$1")"; }

esc_cleanup() {
  local e p
  for e in $ESC_PIDS; do
    p=${e%%:*}
    [ -n "${e#*:}" ] && [ "$(esc_starttime "$p")" = "${e#*:}" ] && kill "$p" 2>/dev/null
  done
  for e in $ESC_PIDS; do wait "${e%%:*}" 2>/dev/null; done
  [ -n "${SHM_ID:-}" ] && ipcrm -m "$SHM_ID" 2>/dev/null
  [ -n "${ESC_WORK:-}" ] && rm -rf "$ESC_WORK"
}

# esc_private CMD...: run CMD inside a throwaway mount/UTS/net/pid namespace
# with a private tmpfs as its working directory, so that a control which
# mounts, makes device nodes or sets the hostname changes nothing of the
# host. As root: `unshare -m -u -n -p -f` with private propagation; otherwise
# inside a new user namespace as well.
esc_private() {
  local d
  d=$(mktemp -d "$ESC_WORK/priv.XXXXXX") || return 99
  local userns=""
  [ "$ESC_IS_ROOT" -eq 1 ] || userns="--user --map-root-user"
  # shellcheck disable=SC2086
  unshare $userns --mount --uts --net --pid --fork --propagation private \
    sh -c 'mount -t tmpfs -o size=64m,mode=0755 escape-control "$1" && cd "$1" && shift && exec "$@"' \
    sh "$d" "$@"
  local rc=$?
  rmdir "$d" 2>/dev/null
  return $rc
}

# The worldd run verb is the capsule engineer's; skip the confined part
# cleanly until it is there.
esc_have_run() {
  [ -x "$WORLDD" ] && "$WORLDD" run --help >/dev/null 2>&1
}

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

# The users the confined part runs as: root (when we are) and uid 65534
# through setpriv, the unprivileged path (a user namespace).
esc_users() {
  if [ "$ESC_IS_ROOT" -eq 1 ]; then
    if command -v setpriv >/dev/null; then echo "root unpriv"; else echo root; fi
  else
    echo self
  fi
}
