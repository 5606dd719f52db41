#!/bin/bash
# What a capsule holds in memory: the agent inside a capsule runs in a copy
# of the process that made the capsule. The daemon's capsules are made by
# its capsule spawner (supervisor/spawner.h), forked before the store was
# opened and the operator token was made, so neither the spawner nor a
# capsule holds the token. The control: the daemon's own memory does (an
# in-process capsule was a copy of it). Root only (reading another
# process's memory needs CAP_SYS_PTRACE).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
command -v curl >/dev/null || { skip "curl not installed" "capsule memory tests"; done_testing; exit; }
[ "$(id -u)" = 0 ] || { skip "not root: another process's memory cannot be read" "capsule memory tests"; done_testing; exit; }
daemon_setup
"$FIXTURE" publish "$DB" "$AILANG_LITE" tests.slow "$top_srcdir/tests/daemon/slow.ail" || bail "fixture publish slow"
daemon_start || bail "daemon did not start"
TOKEN=$(cat "$DB.operator-token")
is "${#TOKEN}" 64 "the operator token is 64 hex characters"

# holds PID NEEDLE: 0 when NEEDLE is in a readable mapping of PID, 1 when
# not, 2 when the memory could not be read (the process went away).
# Mappings over 256 MiB (a sanitizer's shadow, reserved and untouched) are
# skipped; the heap, stacks and data are read.
holds() {
  python3 - "$1" "$2" <<'PY'
import sys
pid, needle = sys.argv[1], sys.argv[2].encode()
try:
    maps = open(f"/proc/{pid}/maps").read().splitlines()
    mem = open(f"/proc/{pid}/mem", "rb", 0)
except OSError:
    sys.exit(2)
read_any = False
for line in maps:
    f = line.split()
    lo, hi = (int(x, 16) for x in f[0].split("-"))
    if f[1][0] != "r" or hi - lo > (256 << 20) or (len(f) > 5 and f[5] in ("[vvar]", "[vsyscall]", "[vvar_vclock]")):
        continue
    try:
        mem.seek(lo)
        data = mem.read(hi - lo)
    except OSError:
        continue
    read_any = True
    if needle in data:
        sys.exit(0)
sys.exit(1 if read_any else 2)
PY
}

SP=""
for p in $(ps -o pid= --ppid "$DPID"); do [ "$(cat "/proc/$p/comm" 2>/dev/null)" = world-spawner ] && SP=$p; done
ok "$([ -n "$SP" ]; echo $?)" "the daemon runs its capsule spawner (pid ${SP:-none})"

holds "$DPID" "$TOKEN"
is "$?" 0 "control: the daemon's own memory holds the operator token"
holds "$SP" "$TOKEN"
is "$?" 1 "the spawner's memory does not (it was forked before the token was made)"

# A capsule while it runs: a slow call in the background, its capsule
# found among the spawner's children and read while it spins.
result=2 seen=0
for attempt in 1 2 3 4 5; do
  curl -sS -m 60 -o /dev/null -H "$(auth "$CRED")" "${MCP_HDRS[@]}" \
    --data-binary '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tests_dslow","arguments":{}}}' \
    "$URL/mcp/" &
  CURL=$!
  CAP=""
  for _ in $(seq 1 300); do
    CAP=$(ps -o pid= --ppid "$SP" | head -1 | tr -d ' ')
    [ -n "$CAP" ] && break
    sleep 0.01
  done
  if [ -n "$CAP" ]; then
    seen=$((seen + 1))
    holds "$CAP" "$TOKEN"; result=$?
    # control: the probe does read that memory: the store path of the
    # daemon's command line (copied into the spawner at its fork) is there
    holds "$CAP" "$DB"; probe=$?
  fi
  wait "$CURL"
  [ "$result" != 2 ] && break
done
ok "$([ "$seen" -ge 1 ]; echo $?)" "a running capsule was found under the spawner ($seen attempt(s))"
is "$result" 1 "the capsule's memory (its agent, a copy of the spawner) does not hold the operator token"
is "${probe:-}" 0 "control: the same probe finds the daemon's --store path in the capsule's memory"
daemon_stop
is "$DRC" 0 "the daemon stops cleanly"
done_testing
