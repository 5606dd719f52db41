#!/bin/bash
# tests/daemon/pg_multi.sh: three `worldd serve` on one PostgreSQL database
# (issue 26; docs/daemon.md "On PostgreSQL"), on a throwaway cluster, 8
# clients each, pure calls (tools.echo) and effectful ones (tests.secret,
# Secret.Read) mixed:
#   - one chain without a fork (entries 1..N contiguous, each chained to the
#     one before; `worldd scan` clean), every acknowledged call committed
#     exactly once, a task id sent to two daemons committed once;
#   - kill -9 of daemon 2 mid-load: no acknowledged call of any daemon is
#     lost, daemons 1 and 3 answer every call of theirs (the control: daemon
#     2 had answered calls just before);
#   - PostgreSQL stopped for 5 s while daemons 1 and 3 are loaded: the calls
#     meanwhile are answered HTTP 503 StoreUnavailable (never a hang, a 500
#     or another error), nothing of them is half-committed, and both daemons
#     serve again by themselves once the server is back (the control: calls
#     succeeded just before the stop); every call refused by the outage,
#     retried with its task id, commits exactly once; no journal intent is
#     left open but the killed daemon's.
#   - issue 44: that outage under the three daemons (2 started again) x 8
#     clients, every other call a write (tests.write, ailang-write): GET
#     /v1/ready 503 on each while the server is down and 200 once it is back,
#     the first operator-token read of each after the restart never 401, only
#     commits and 503s answered (an effect cut off before its commit is held
#     and answered committed), every acknowledged call committed once, every
#     503'd task id answered on a retry to any daemon, each acknowledged write
#     in the worktree, no intent open but the killed daemon's.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/pg_cluster.sh"
. "$top_srcdir/tests/daemon/lib.sh"
command -v curl >/dev/null || { skip "curl not installed" "daemon tests"; done_testing; exit; }
daemon_setup
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; daemon_kill; pg_cluster_cleanup; rm -rf "$T"' EXIT
chmod 755 "$T"
pg_cluster_or_skip "three daemons on one PostgreSQL database"
psqlc() { "$PG_BIN/psql" -X -q -A -t -h "$PG_SOCK" -p "$PG_PORT" -U worldsu -d world "$@"; }
# a session with budget for every effectful call below
CRED_FX=$(printf '8%.0s' $(seq 64))
"$FIXTURE" session "$DB" "$CRED_FX" ep-fx '[{"budget":100000,"effect":"Secret.Read","scope":"vault"},{"budget":100000,"effect":"Workspace.Write","scope":"worktree"}]' +3600 || bail "fixture session"
# tests.write: packages/se-tools' ailang-write (one Workspace.Write, published as se-tools does)
FIXTURE_EFFECTFUL='{"cost":1,"effect":"Workspace.Write","scope":"worktree"}' \
  "$FIXTURE" publish "$DB" "$AILANG_LITE" tests.write "$top_srcdir/packages/se-tools/ailang-write.ail" \
  '{"cost":0,"effect":"Workspace.Write","scope":"worktree"}' || bail "fixture publish tests.write"
mkdir -p "$T/ws" && chmod 700 "$T/ws"
"$WORLDD" store copy "$DB" "$PG_URI" > "$T/copy.out" 2> "$T/copy.err" || bail "store copy: $(cat "$T/copy.err")"
XDG_CACHE_HOME=$T/cache; export XDG_CACHE_HOME

declare -a U P
start_d() { # N: daemon N on 127.0.0.1:0, its URL in U[N]
  local n=$1
  "$WORLDD" serve --store "$PG_URI" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 --workspace-root "$T/ws" >"$T/out$n" 2>>"$T/err$n" &
  P[$n]=$!; PIDS+=("${P[$n]}")
  for _ in $(seq 1 300); do
    U[$n]=$(sed -n 's/^worldd listening on //p' "$T/out$n")
    [ -n "${U[$n]}" ] && return 0
    kill -0 "${P[$n]}" 2>/dev/null || break
    sleep 0.1
  done
  diag "daemon $n did not start: $(cat "$T/err$n")"; return 1
}
stop_d() { kill -TERM "${P[$1]}" 2>/dev/null; wait "${P[$1]}" 2>/dev/null; }
# callx N TASK: one call to daemon N (a task id ending in x: tests.secret with
# $CRED_FX, else tools.echo with $CRED); prints "ok", "http:STATUS:CLASS" of
# an error envelope, "err:TEXT" of an error result, or "noanswer"
callx() {
  local name=tools_decho cred=$CRED args="{\"t\":\"$2\"}"
  case $2 in *x) name=tests_dsecret cred=$CRED_FX ;; esac
  # a task id ending in w: tests.write, a file of the worktree written
  case $2 in *w) name=tests_dwrite cred=$CRED_FX args="{\"path\":\"$2.txt\",\"content\":\"$2\"}" ;; esac
  curl -sS -m 30 -X POST "${U[$1]}/mcp/" -H "$(auth "$cred")" "${MCP_HDRS[@]}" -w '\n%{http_code}\n' --data-binary \
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$name\",\"arguments\":$args,\"_meta\":{\"world/task_id\":\"$2\"}}}" 2>/dev/null |
    python3 -c 'import json,sys
lines = sys.stdin.read().split("\n")
code = lines[-2] if len(lines) >= 2 else "000"
body = "\n".join(lines[:-2])
data = [l[6:] for l in body.split("\n") if l.startswith("data: ")]
try:
    r = json.loads(data[0] if data else body)
except Exception:
    print("noanswer" if code == "000" else "http:%s:unparsed" % code); sys.exit()
if "error" in r and isinstance(r["error"], dict) and "class" in r["error"]:
    print("http:%s:%s" % (code, r["error"]["class"])); sys.exit()
res = r.get("result") or {}
if res.get("isError") is False: print("ok")
elif code != "200": print("http:%s:%s" % (code, ((res.get("_meta") or {}).get("world/error") or {}).get("class", "result")))
else: print("err:" + str((res.get("content") or [{}])[0].get("text", json.dumps(r)))[:200])'
}
committed() { # TASK: committed invocation outcomes of that task id (either episode)
  psqlc -c "SELECT count(*) FROM journal WHERE phase='outcome' AND status='committed' AND kind='invocation' AND subject IN ('mcp:ep-a:$1','mcp:ep-fx:$1')"
}

for n in 1 2 3; do start_d "$n" || bail "daemon $n"; done
is "$(callx 1 a-1)/$(callx 2 a-2x)/$(callx 3 a-3)" "ok/ok/ok" "three daemons on one PostgreSQL database each serve a call (pure, effectful, pure)"

# ---- 8 clients per daemon, kill -9 of daemon 2 mid-load ----
LOAD="$T/load"; mkdir -p "$LOAD"
CALLS=5
client() { # DAEMON CLIENT: CALLS calls (every other one effectful), each acknowledged task id appended to a file
  local d=$1 c=$2 i t
  for i in $(seq 1 $CALLS); do
    t="L$d-$c-$i"; [ $((i % 2)) = 0 ] && t="${t}x"
    [ "$(callx "$d" "$t")" = ok ] && echo "$t" >> "$LOAD/ack.$d.$c"
    # the third call is also sent to the next daemon with the same task id
    if [ "$i" = 3 ]; then
      [ "$(callx $(( d % 3 + 1 )) "$t")" = ok ] && echo "$t" >> "$LOAD/dup.$d.$c"
    fi
  done
}
CL=()
for d in 1 2 3; do for c in $(seq 1 8); do client "$d" "$c" & CL+=($!); done; done
for _ in $(seq 1 1200); do [ "$(cat "$LOAD"/ack.2.* 2>/dev/null | wc -l)" -ge 4 ] && break; sleep 0.05; done
n2=$(cat "$LOAD"/ack.2.* 2>/dev/null | wc -l)
ok "$([ "$n2" -ge 4 ]; echo $?)" "control: daemon 2 answered calls under load ($n2) before the kill"
kill -KILL "${P[2]}"; wait "${P[2]}" 2>/dev/null
for p in "${CL[@]}"; do wait "$p"; done
is "$(cat "$LOAD"/ack.1.* "$LOAD"/ack.3.* 2>/dev/null | wc -l)" $((2 * 8 * CALLS)) \
  "daemons 1 and 3 answered every call of their 16 clients ($((2 * 8 * CALLS))) through the kill"
lost=0 twice=0
for t in $(cat "$LOAD"/ack.* "$LOAD"/dup.* 2>/dev/null | sort -u); do
  n=$(committed "$t")
  [ "$n" = 0 ] && lost=$((lost + 1))
  [ "$n" -gt 1 ] && twice=$((twice + 1))
done
is "$lost" 0 "no acknowledged call is lost, the killed daemon's included ($(cat "$LOAD"/ack.* | wc -l) acknowledged)"
is "$twice" 0 "no task id is committed twice (each third call was sent to two daemons)"
ok "$([ "$(cat "$LOAD"/dup.* 2>/dev/null | wc -l)" -ge 8 ]; echo $?)" "... and the second daemons acknowledged those duplicates ($(cat "$LOAD"/dup.* 2>/dev/null | wc -l)) as the one commit"
chain() {
  psqlc -c "SELECT ((SELECT count(*) FROM log_entries) = (SELECT max(entry_index) FROM log_entries) AND (SELECT count(*) FROM log_entries l JOIN log_entries p ON p.entry_index = l.entry_index - 1 WHERE l.prev_entry_hash IS DISTINCT FROM p.entry_hash) = 0 AND (SELECT count(*) FROM log_entries WHERE entry_index = 1 AND prev_entry_hash IS NOT NULL) = 0)::int"
}
is "$(chain)" 1 "one chain: entries 1..N contiguous, each chained to the one before ($(psqlc -c 'SELECT count(*) FROM log_entries') entries)"
is "$(psqlc -c "SELECT count(*) FROM (SELECT 1 FROM journal WHERE phase='outcome' AND status='committed' GROUP BY kind, subject HAVING count(*) > 1) d")" 0 \
  "no (kind, subject) has two committed outcomes"

# ---- PostgreSQL stopped for 5 s under three daemons x 8 clients, with writes (issue 44) ----
start_d 2 || bail "daemon 2 again"
OUT="$T/outage"; mkdir -p "$OUT"
is "$(callx 1 o-ctl-1)/$(callx 2 o-ctl-2w)/$(callx 3 o-ctl-3x)" "ok/ok/ok" "control: the three daemons commit calls just before the stop (one a write)"
TOKEN=$(cat "$("$WORLDD" token path --store "$PG_URI")")
rdy() { curl -sS -m 10 -o /dev/null -w '%{http_code}' "${U[$1]}/v1/ready" 2>/dev/null; }
is "$(rdy 1)$(rdy 2)$(rdy 3)" "200200200" "GET /v1/ready before the stop: 200 on the three daemons"
oclient() { # DAEMON CLIENT: 16 calls a quarter second apart, every other one a write; each task id's answer to a file
  local d=$1 c=$2 i t
  for i in $(seq 1 16); do
    t="O$d-$c-$i"; [ $((i % 2)) = 0 ] && t="${t}w"
    printf '%s %s\n' "$t" "$(callx "$d" "$t")" >> "$OUT/res.$d.$c"
    sleep 0.25
  done
}
CL=()
for d in 1 2 3; do for c in $(seq 1 8); do oclient "$d" "$c" & CL+=($!); done; done
sleep 1
bash -c "$PG_STOP" || bail "pg_ctl stop"
down_ready="$(rdy 1)$(rdy 2)$(rdy 3)"
sleep 5
bash -c "$PG_START" || bail "pg_ctl start"
# the first operator-token read of each daemon after the return
op_reads=""
for d in 1 2 3; do op_reads="$op_reads$(curl -sS -m 10 -o /dev/null -w '%{http_code}' -H "$(auth "$TOKEN")" "${U[$d]}/v1/head" 2>/dev/null) "; done
for p in "${CL[@]}"; do wait "$p"; done
is "$down_ready" "503503503" "GET /v1/ready while the server was down: 503 on the three daemons"
unlike "$op_reads" "401" "the first operator-token read of each daemon after the restart: never 401 ($op_reads)"
up=""
for d in 1 2 3; do for _ in $(seq 1 100); do [ "$(rdy $d)" = 200 ] && break; sleep 0.1; done; up="$up$(rdy $d)"; done
is "$up" "200200200" "GET /v1/ready once the server is back: 200 on the three daemons"
cat "$OUT"/res.* > "$OUT/all"
n503=$(grep -c ' http:503:StoreUnavailable$' "$OUT/all")
nok=$(grep -c ' ok$' "$OUT/all")
other=$(grep -v ' ok$' "$OUT/all" | grep -v ' http:503:StoreUnavailable$')
ok "$([ "$n503" -ge 8 ]; echo $?)" "while the server was down the calls were answered HTTP 503 StoreUnavailable ($n503 of $(wc -l < "$OUT/all"), $(grep -c 'w ok$' "$OUT/all") writes acknowledged)"
is "$other" "" "... and every other answer was a commit: no hang, no 500, no indeterminate refusal, no other error"
held=$(cat "$T"/err1 "$T"/err2 "$T"/err3 | grep -c 'outcome written' || true)
diag "outcomes held through the outage and written on the return: $held"
last_ok=0
for f in "$OUT"/res.*; do [ "$(tail -n 1 "$f" | cut -d' ' -f2)" = ok ] && last_ok=$((last_ok + 1)); done
is "$last_ok" 24 "the server back: every client's last call committed on the same daemons, no restart"
ok "$(kill -0 "${P[1]}" && kill -0 "${P[2]}" && kill -0 "${P[3]}"; echo $?)" "... the three daemons ran throughout"
bad=0
for t in $(grep ' ok$' "$OUT/all" | cut -d' ' -f1); do [ "$(committed "$t")" = 1 ] || bad=$((bad + 1)); done
is "$bad" 0 "each of the $nok calls acknowledged around the outage is committed exactly once"
half=0
for t in $(grep ' http:503' "$OUT/all" | cut -d' ' -f1); do [ "$(committed "$t")" -le 1 ] || half=$((half + 1)); done
is "$half" 0 "no call answered 503 is committed twice"
retry_bad=0 nretry=0
for t in $(grep ' http:503' "$OUT/all" | cut -d' ' -f1); do
  nretry=$((nretry + 1))
  for _ in 1 2 3 4 5; do r=$(callx $(( nretry % 3 + 1 )) "$t"); [ "$r" = http:503:StoreUnavailable ] || break; sleep 0.5; done
  { [ "$r" = ok ] && [ "$(committed "$t")" = 1 ]; } || { retry_bad=$((retry_bad + 1)); diag "retry of $t: $r"; }
done
is "$retry_bad" 0 "every call refused by the outage ($nretry), retried with its task id on any daemon, is answered and committed exactly once"
writes=$(grep -c 'w ok$' "$OUT/all")
files=0
for t in $(grep 'w ok$' "$OUT/all" | cut -d' ' -f1); do [ "$(cat "$T/ws/ep-fx/$t.txt" 2>/dev/null)" = "$t" ] && files=$((files + 1)); done
is "$files" "$writes" "every acknowledged write is in the worktree ($writes)"
is "$(chain)" 1 "still one chain after the outage ($(psqlc -c 'SELECT count(*) FROM log_entries') entries)"
# an intent without its outcome: only where daemon 2 was killed mid-call
open=$(psqlc -c "SELECT coalesce(string_agg(coalesce(subject, '?'), ' '), '') FROM journal i WHERE phase = 'intent' AND NOT EXISTS (SELECT 1 FROM journal o WHERE o.phase = 'outcome' AND o.intent_id = i.id)")
is "$(printf '%s\n' $open | grep . | grep -v -c -- ':L2-' || true)" 0 "no journal intent is left open but the killed daemon's (open: ${open:-none})"
stop_d 1; stop_d 2; stop_d 3
run_capture out err rc "$WORLDD" scan --store "$PG_URI"
is "$rc:$out" "0:" "worldd scan of the database is clean after the kill -9 and the outage ($err)"
done_testing
