#!/bin/bash
# worldd serve under load: 50 concurrent MCP clients, every call committed
# exactly once; no fd growth, no capsule left; then SIGKILL in the middle of
# a load and a restart: the scan is clean, every call a client saw
# acknowledged is in the log (entry, world, invocation record), no capsule
# process or capsule cgroup of the killed daemon is left.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
command -v curl >/dev/null || { skip "curl not installed" "daemon load tests"; done_testing; exit; }
daemon_setup
"$FIXTURE" publish "$DB" "$AILANG_LITE" tests.slow "$top_srcdir/tests/daemon/slow.ail" || bail "fixture publish slow"
CLIENTS=50

client() { # ID CALLS [TOOL]: sequential tools/call, each answer kept in $T/acks
  local id=$1 n=$2 tool=${3:-tools_decho} k
  for k in $(seq 1 "$n"); do
    curl -sS -m 60 -o "$T/acks/$id-$k.json" -w '%{http_code}' -H "$(auth "$CRED")" "${MCP_HDRS[@]}" \
      --data-binary "{\"jsonrpc\":\"2.0\",\"id\":$k,\"method\":\"tools/call\",\"params\":{\"name\":\"$tool\",\"arguments\":{\"client\":\"$id\",\"call\":$k}}}" \
      "$URL/mcp/" > "$T/acks/$id-$k.code" 2>/dev/null || return 0
  done
}
# acknowledged calls: "invocation_id entry_index world_ref client call" per line
acks() {
  python3 - "$T/acks" <<'PY'
import json, os, sys
d = sys.argv[1]
for f in sorted(os.listdir(d)):
    if not f.endswith(".json"): continue
    code = open(os.path.join(d, f[:-5] + ".code")).read().strip() if os.path.exists(os.path.join(d, f[:-5] + ".code")) else ""
    if code != "200": continue
    body = open(os.path.join(d, f)).read()
    data = [l[6:] for l in body.splitlines() if l.startswith("data: ")]
    if not data: continue
    r = json.loads(data[0]).get("result", {})
    if r.get("isError") is not False: continue
    m = r["_meta"]["world/invocation"]
    print(m["invocation_id"], m["entry_index"], m["world_ref"], f[:-5])
PY
}
fds() { ls "/proc/$DPID/fd" | wc -l; }
kids() { # pid:starttime of every descendant of $1
  local p st
  for p in $(ps -o pid= --ppid "$1" 2>/dev/null); do
    st=$(awk '{print $22}' "/proc/$p/stat" 2>/dev/null)
    [ -n "$st" ] || continue # gone already
    echo "$p:$st"
    kids "$p"
  done
}
spawner() { # the daemon's capsule spawner (supervisor/spawner.h): its child named world-spawner
  local p
  for p in $(ps -o pid= --ppid "$1" 2>/dev/null); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = world-spawner ] && echo "$p"
  done
}
capsules() { # the capsule processes of daemon $1: every descendant but the spawner
  local sp
  sp=$(spawner "$1")
  kids "$1" | grep -v "^${sp:-none}:"
}

# Every client here is a session of one episode, so its share is the whole
# capacity (--session-share 8): all eight workers carry this load, as they
# did before shares (tests/daemon/share.sh tests the shares themselves).
daemon_start --capacity 8 --session-share 8 || bail "daemon did not start"
mkdir -p "$T/acks"
for i in $(seq 1 $CLIENTS); do client "$i" 4 & done
wait $(jobs -p | grep -v "^$DPID$") 2>/dev/null
acks > "$T/acked1"
is "$(wc -l < "$T/acked1" | tr -d ' ')" $((CLIENTS * 4)) "50 concurrent clients x 4 calls: every call acknowledged"
is "$(awk '{print $2}' "$T/acked1" | sort -n | uniq | wc -l | tr -d ' ')" $((CLIENTS * 4)) "every acknowledged call has its own entry index"
is "$(awk '{print $2}' "$T/acked1" | sort -n | tail -1)" $((CLIENTS * 4)) "entry indexes run 1..200 without a gap"
http GET /v1/head -H "$(auth "$CRED")"
is "$(jget revision <<<"$BODY")" $((CLIENTS * 4)) "the head is at revision 200"
SP=$(spawner "$DPID")
ok "$([ -n "$SP" ]; echo $?)" "the daemon runs a capsule spawner (pid ${SP:-none})"
is "$(capsules "$DPID" | wc -l | tr -d ' ')" 0 "no capsule process is left after the load"
# the first burst's last connections may still be closing: take the count
# once it has held still for a second (a closing socket settles, a leak
# does not shrink)
settled_fds() {
  local prev=-1 cur same=0
  for _ in $(seq 1 100); do
    cur=$(fds)
    if [ "$cur" = "$prev" ]; then same=$((same + 1)); [ $same -ge 10 ] && break; else same=0; fi
    prev=$cur; sleep 0.1
  done
  echo "$cur"
}
F1=$(settled_fds)
ls -l "/proc/$DPID/fd" > "$T/fds1" 2>/dev/null
rm -f "$T/acks"/*
for i in $(seq 1 $CLIENTS); do client "$i" 2 & done
wait $(jobs -p | grep -v "^$DPID$") 2>/dev/null
is "$(acks | wc -l | tr -d ' ')" $((CLIENTS * 2)) "a second burst: every call acknowledged"
# the last connections of the burst may still be closing: a leak never
# settles, a closing socket does (within 5 s)
# A leak grows with the calls: one fd kept per call is $((CLIENTS * 2)) more
# after this burst. What may legitimately differ is a few: a pooled reader
# connection (its database and WAL fds) opened when this burst ran more
# calls at once than the first, a socket still in its close. So the bound
# is under one per client, and what differs is printed either way.
F2=$(settled_fds)
[ "$F2" -lt $((F1 + CLIENTS / 2)) ]; st=$?
ok $st "the daemon's fds after a second burst of $((CLIENTS * 2)) calls: $F2 against $F1 after the first (a leak of one per call would be $((F1 + CLIENTS * 2)))"
if [ "$F2" -ne "$F1" ]; then
  ls -l "/proc/$DPID/fd" > "$T/fds2" 2>/dev/null
  diff <(awk '{print $NF}' "$T/fds1" | sort) <(awk '{print $NF}' "$T/fds2" | sort) | head -20 | sed 's/^/# /'
fi

# ---- a call in flight holds up no other connection ----
# Calls run on the daemon's call workers, not on libmicrohttpd's threads
# (daemon/server.c). Eight keep-alive connections are opened first (so the
# HTTP threads have taken them on before any call), six carry slow calls
# (~0.2 s of CPU each; capacity 8), and once three capsules run the other
# two carry GET /v1/health and an echo call: both must be answered before
# the first slow call is. (Before, a call ran on the HTTP thread that had
# its connection, and that thread's other connections waited: bench/
# daemon_bench's eight clients had five connections on one thread.)
SP=$(spawner "$DPID")
run_capture hol hol_err hol_rc python3 - "$URL" "$CRED" "$SP" <<'PY'
import http.client, json, os, sys, threading, time, urllib.parse
url, cred, sp = sys.argv[1], sys.argv[2], sys.argv[3]
u = urllib.parse.urlparse(url)
conns = [http.client.HTTPConnection(u.hostname, u.port, timeout=60) for _ in range(8)]
for c in conns: c.connect()
hdrs = {"Authorization": "Bearer " + cred, "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream"}
def call(c, tool, i):
    body = json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": tool, "arguments": {"i": i}}})
    c.request("POST", "/mcp/", body, hdrs)
    r = c.getresponse(); r.read()
    return r.status
done = {}
def slow(i):
    st = call(conns[i], "tests_dslow", i)
    done["slow%d" % i] = (time.monotonic(), st)
ts = [threading.Thread(target=slow, args=(i,)) for i in range(6)]
for t in ts: t.start()
def capsules():
    n = 0
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                if open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[1] == sp: n += 1
            except (OSError, IndexError): pass
    return n
for _ in range(1000):
    if capsules() >= 3: break
    time.sleep(0.005)
running = capsules()
conns[6].request("GET", "/v1/health"); r = conns[6].getresponse(); r.read()
done["health"] = (time.monotonic(), r.status)
st = call(conns[7], "tools_decho", 7)
done["echo"] = (time.monotonic(), st)
for t in ts: t.join()
first_slow = min(v[0] for k, v in done.items() if k.startswith("slow"))
print("running=%d health=%d echo=%d slow=%s health_first=%d echo_first=%d" % (
    running, done["health"][1], done["echo"][1], ",".join(str(done["slow%d" % i][1]) for i in range(6)),
    done["health"][0] < first_slow, done["echo"][0] < first_slow))
PY
diag "keep-alive connections: $hol $hol_err"
like "$hol" "running=[3-9][0-9]* health=200 echo=200 slow=200,200,200,200,200,200" \
  "eight keep-alive connections: six slow calls, a health check and an echo call all answered 200"
like "$hol" "health_first=1" "GET /v1/health on another connection is answered before the first slow call"
like "$hol" "echo_first=1" "... and so is a tools/call on another connection"

# ---- SIGKILL in the middle of a load ----
rm -f "$T/acks"/*
for i in $(seq 1 $CLIENTS); do client "$i" 20 & done
for i in $(seq 1 8); do client "slow$i" 20 tests_dslow & done # capsules that live ~0.2 s each
for _ in $(seq 1 600); do # until 100 answers are in and capsules are running, at most 60 s
  [ "$(ls "$T/acks" | grep -c '\.code$')" -ge 100 ] && [ -n "$(capsules "$DPID")" ] && break
  sleep 0.1
done
KIDS=$(kids "$DPID")
# The daemon and its spawner die at once (the OOM killer, a power cut):
# nothing of theirs can clean up. (The daemon alone killed: its spawner
# kills the capsules and removes the groups, tests/supervisor/test_spawner.)
OLDPID=$(spawner "$DPID") # the maker of the capsules and their groups
kill -KILL "$DPID" $OLDPID
wait "$DPID" 2>/dev/null
DPID=""
wait 2>/dev/null
acks > "$T/acked2"
N2=$(wc -l < "$T/acked2" | tr -d ' ')
ok "$([ "$N2" -ge 1 ]; echo $?)" "SIGKILL mid-load: $N2 calls had been acknowledged"
ok "$([ "$N2" -lt $((CLIENTS * 20)) ]; echo $?)" "... and the kill cut the load short"
left=0
for _ in $(seq 1 300); do # capsules die with their spawner (PDEATHSIG); at most 30 s
  left=0 seen=""
  for k in $KIDS; do
    p=${k%%:*}; st=${k#*:}
    if [ "$(awk '{print $22}' "/proc/$p/stat" 2>/dev/null)" = "$st" ]; then
      left=$((left + 1)); seen="$seen [pid $p $(cut -c1-60 "/proc/$p/comm" 2>/dev/null) state=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null) ppid=$(awk '{print $4}' "/proc/$p/stat" 2>/dev/null)]"
    fi
  done
  [ "$left" -eq 0 ] && break
  sleep 0.1
done
# a stray born after the snapshot still shows: it holds the daemon's fds
HOLDERS=$(for f in /proc/[0-9]*/fd/*; do case "$(readlink "$f" 2>/dev/null)" in "$DB"|"$DB-wal"|"$DB-shm") f=${f#/proc/}; echo "${f%%/*}";; esac; done | sort -u)
for p in $HOLDERS; do
  case " $KIDS " in *" $p:"*) ;; *) left=$((left + 1)); KIDS="$KIDS $p:$(awk '{print $22}' "/proc/$p/stat" 2>/dev/null)"; seen="$seen [pid $p holds the store open]";; esac
done
if [ "$left" -eq 0 ]; then
  ok 0 "no capsule process of the killed daemon is left ($(echo $KIDS | wc -w) were running)"
else
  # A capsule child whose supervisor died between clone3 and the 'G' byte
  # used to wait forever in its read (capsule/ fixed it: the child closes
  # the parent's ends and sets PR_SET_PDEATHSIG first); it kept the
  # daemon's fds, the writer lock among them. The strays are killed (by pid
  # + start time) so that the rest of this test still runs.
  diag "left after 30 s:$seen"
  ok 1 "no capsule process of the killed daemon is left ($left stray)"
  for k in $KIDS; do
    p=${k%%:*}
    [ "$(awk '{print $22}' "/proc/$p/stat" 2>/dev/null)" = "${k#*:}" ] && kill -KILL "$p" 2>/dev/null
  done
  sleep 0.5
fi

CG0=$(find /sys/fs/cgroup -maxdepth 6 -type d -name "world-capsule-$OLDPID-*" 2>/dev/null | wc -l | tr -d ' ')
if [ "$CG0" -gt 0 ]; then ok 0 "control: the killed daemon left $CG0 capsule cgroup(s) behind"
else skip "capsules got no cgroup here (no usable hierarchy)" "control: the killed daemon left capsule cgroups behind"; fi
daemon_start --capacity 8 --session-share 8 || bail "daemon did not restart after SIGKILL"
is "$(grep -c '^integrity_' "$T/out")" 0 "restart after SIGKILL: the integrity scan is clean"
diag "indeterminate intents reported at restart: $(grep -c '^journal_indeterminate' "$T/out")"
is "$(grep -vc '^journal_indeterminate\|^worldd listening on ' "$T/out")" 0 "stdout holds only indeterminate reports and the listening line"
missing=0
while read -r inv idx wref name; do
  http GET "/v1/log/$idx" -H "$(auth "$CRED")"
  [ "$STATUS" = 200 ] || { missing=$((missing + 1)); continue; }
  rec=$(jget transitionRef <<<"$BODY")
  http GET "/v1/worlds/$wref" -H "$(auth "$CRED")"
  [ "$STATUS" = 200 ] && [ "$(jget revision <<<"$BODY")" = "$idx" ] || { missing=$((missing + 1)); continue; }
  http GET "/v1/objects/$rec?payload=true" -H "$(auth "$CRED")"
  [ "$(jget payload <<<"$BODY" | base64 -d | jget invocationId)" = "$inv" ] || missing=$((missing + 1))
done < "$T/acked2"
is "$missing" 0 "every acknowledged call is in the log: its entry, its world at that revision, its invocation record"
http GET /v1/head -H "$(auth "$CRED")"
HEAD2=$(jget revision <<<"$BODY")
ok "$([ "$HEAD2" -ge $((CLIENTS * 6 + N2)) ]; echo $?)" "the head ($HEAD2) holds at least every acknowledged call"
CG=$(find /sys/fs/cgroup -maxdepth 6 -type d -name "world-capsule-$OLDPID-*" 2>/dev/null | wc -l | tr -d ' ')
is "$CG" 0 "no capsule cgroup of the killed daemon is left after the restart"
rm -f "$T/acks"/*
for i in $(seq 1 10); do client "$i" 2 & done
wait $(jobs -p | grep -v "^$DPID$") 2>/dev/null
is "$(acks | wc -l | tr -d ' ')" 20 "the restarted daemon serves calls"
# ---- SIGTERM with a call in flight: it is answered, then the daemon exits ----
rm -f "$T/acks"/*
client drain 1 tests_dslow &
CPID=$!
for _ in $(seq 1 300); do [ -n "$(capsules "$DPID")" ] && break; sleep 0.01; done
inflight=$(capsules "$DPID" | wc -l | tr -d ' ')
kill -TERM "$DPID"
wait "$CPID"
is "$(cat "$T/acks/drain-1.code" 2>/dev/null)" 200 "SIGTERM during a call ($inflight capsule process(es) running): the call is still answered"
is "$(acks | wc -l | tr -d ' ')" 1 "... with its committed result"
curl -sS -m 5 -o /dev/null "$URL/v1/health" 2>/dev/null
nok $? "... and no new connection is accepted"
for _ in $(seq 1 400); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
wait "$DPID"; DRC=$?; DPID=""
is "$DRC" 0 "the restarted daemon stops cleanly after draining"
run_capture out err rc "$WORLDD" scan --store "$DB"
is "$rc/$out" "0/" "worldd scan of the store afterwards: clean"
done_testing
