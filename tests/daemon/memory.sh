#!/bin/bash
# What a capsule holds in memory: the agent inside a capsule runs in a copy
# of the process that made the capsule. The daemon's capsules are made by
# its capsule spawner (supervisor/spawner.h), forked before the store was
# opened and the operator token was made, so neither the spawner nor a
# capsule holds the token. The control: a process that holds the token in
# its argv, read by the same probe. Root only (reading another
# process's memory needs CAP_SYS_PTRACE).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
command -v curl >/dev/null || { skip "curl not installed" "capsule memory tests"; done_testing; exit; }
[ "$(id -u)" = 0 ] || { skip "not root: another process's memory cannot be read" "capsule memory tests"; done_testing; exit; }
daemon_setup
# tests/daemon/slow.ail spinning fifty times as long (about ten seconds,
# under the 20 s deadline): time to read the capsule's memory while it runs
# however loaded the machine is; once read, the call is cancelled
# (notifications/cancelled), which kills the capsule if it still runs
sed 's/rep(8)/rep(400)/' "$top_srcdir/tests/daemon/slow.ail" > "$T/slower.ail"
"$FIXTURE" publish "$DB" "$AILANG_LITE" tests.slower "$T/slower.ail" || bail "fixture publish slower"
daemon_start || bail "daemon did not start"
TOKEN=$(cat "$DB.operator-token")
is "${#TOKEN}" 64 "the operator token is 64 hex characters"

# scan PID NEEDLE...: for each needle, in order, "1" when it is in a
# readable mapping of PID, else "0", in one pass (a capsule lives a few
# hundred ms); exit 2 when the memory could not be read (the process went
# away). Mappings over 256 MiB (a sanitizer's shadow) are skipped; of the
# rest, every page present is read (the heap, stacks and data).
scan() {
  python3 - "$@" <<'PY'
import struct, sys
pid, needles = sys.argv[1], [n.encode() for n in sys.argv[2:]]
found = [False] * len(needles)
PAGE = 4096
try:
    maps = open(f"/proc/{pid}/maps").read().splitlines()
    mem = open(f"/proc/{pid}/mem", "rb", 0)
    pagemap = open(f"/proc/{pid}/pagemap", "rb", 0)
except OSError:
    sys.exit(2)
read_any = False
for line in maps:
    f = line.split()
    lo, hi = (int(x, 16) for x in f[0].split("-"))
    if f[1][0] != "r" or hi - lo > (256 << 20) or (len(f) > 5 and f[5] in ("[vvar]", "[vsyscall]", "[vvar_vclock]")):
        continue
    # only the pages present (or swapped out): a reserved, untouched arena
    # holds nothing, and reading it whole would outlast the capsule
    try:
        pagemap.seek(lo // PAGE * 8)
        ents = pagemap.read((hi - lo) // PAGE * 8)
    except OSError:
        continue
    there = [(e >> 62) != 0 for e in struct.unpack(f"{len(ents) // 8}Q", ents)]
    i = 0
    while i < len(there):
        if not there[i]:
            i += 1
            continue
        j = i
        while j < len(there) and there[j]:
            j += 1
        try:
            mem.seek(lo + i * PAGE)
            data = mem.read((j - i) * PAGE)
            read_any = True
            for k, n in enumerate(needles):
                found[k] = found[k] or n in data
        except OSError:
            pass
        i = j
if not read_any:
    sys.exit(2)
print(" ".join("1" if x else "0" for x in found))
PY
}

SP=""
for p in $(ps -o pid= --ppid "$DPID"); do [ "$(cat "/proc/$p/comm" 2>/dev/null)" = world-spawner ] && SP=$p; done
ok "$([ -n "$SP" ]; echo $?)" "the daemon runs its capsule spawner (pid ${SP:-none})"

# The control: the same probe finds the token in a process that holds it
# (here in its argv). The daemon itself keeps only the token's hash since
# the token moved into the store (docs/daemon.md), so it is no control now.
python3 -c 'import time; time.sleep(60)' "$TOKEN" &
HOLDER=$!
is "$(scan "$HOLDER" "$TOKEN")" 1 "control: the probe finds the operator token in a process that holds it"
kill "$HOLDER" 2>/dev/null; wait "$HOLDER" 2>/dev/null
is "$(scan "$SP" "$TOKEN" "$DB")" "0 1" "the spawner's memory does not (it was forked before the token was made), but holds the --store path"

# A capsule while it runs: a slow call in the background, its capsule
# found among the spawner's children and read while it spins.
result="" seen=0
for attempt in 1 2 3 4 5; do
  curl -sS -m 60 -o /dev/null -H "$(auth "$CRED")" "${MCP_HDRS[@]}" \
    --data-binary "{\"jsonrpc\":\"2.0\",\"id\":$attempt,\"method\":\"tools/call\",\"params\":{\"name\":\"tests_dslower\",\"arguments\":{}}}" \
    "$URL/mcp/" &
  CURL=$!
  # look until the call is answered (its capsule has ended by then), not
  # for a fixed count: a loaded machine can take seconds to start it
  CAP=""
  for _ in $(seq 1 3000); do
    CAP=$(ps -o pid= --ppid "$SP" | head -1 | tr -d ' ')
    [ -n "$CAP" ] && break
    kill -0 "$CURL" 2>/dev/null || break
    sleep 0.01
  done
  if [ -n "$CAP" ]; then
    seen=$((seen + 1))
    st=$(awk '{print $22}' "/proc/$CAP/stat" 2>/dev/null)
    # with a control: the store path of the daemon's command line (copied
    # into the spawner at its fork) is found there by the same probe
    result=$(scan "$CAP" "$TOKEN" "$DB")
    # a capsule that ended during the pass was not read whole: again
    [ "$(awk '{print $22}' "/proc/$CAP/stat" 2>/dev/null)" = "$st" ] || result=""
  fi
  # done reading: cancel the call (its capsule is killed), or it ends by itself
  curl -sS -m 30 -o /dev/null -H "$(auth "$CRED")" "${MCP_HDRS[@]}" \
    --data-binary "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":$attempt,\"reason\":\"memory read\"}}" \
    "$URL/mcp/"
  wait "$CURL"
  [ -n "$result" ] && break
done
ok "$([ "$seen" -ge 1 ]; echo $?)" "a running capsule was found under the spawner ($seen attempt(s))"
is "$result" "0 1" "the capsule's memory (its agent, a copy of the spawner) does not hold the operator token (control: the same pass finds the --store path)"
# (the cancel only saves time: when the read outlasted the spin, the call
# had already ended and the cancel was ignored; either is fine)
diag "after the read: $(grep -o 'cancel episode=[^ ]* request_id=[0-9]*: .*' "$T/err" | tail -n 1)"
daemon_stop
is "$DRC" 0 "the daemon stops cleanly"
done_testing
