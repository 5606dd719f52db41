#!/bin/bash
# Operating a live store (docs/operations.md, "Several daemons, one store"):
# no process owns the store, so session revoke/mint and a publish run while
# daemons serve, and every daemon sees them on its next call; a JSON-RPC
# batch re-checks its session per call (revoked or expired between two
# calls of one batch); three daemons on one store under load keep one
# chain, commit a task id sent to two daemons once, and lose no
# acknowledged call when one of them is killed with SIGKILL.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
command -v curl >/dev/null || { skip "curl not installed" "daemon tests"; done_testing; exit; }
daemon_setup
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; daemon_kill; rm -rf "$T"' EXIT

# start_d N [env...]: daemon N on 127.0.0.1:0, its URL in U[N]
declare -a U
start_d() {
  local n=$1; shift
  env "$@" "$WORLDD" serve --store "$DB" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 >"$T/out$n" 2>"$T/err$n" &
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
# callx N CRED TASK: one tools/call of tools_decho to daemon N; prints "ok", or the error text
callx() {
  curl -sS -m 60 -X POST "${U[$1]}/mcp/" -H "$(auth "$2")" "${MCP_HDRS[@]}" --data-binary \
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"tools_decho\",\"arguments\":{\"t\":\"$3\"},\"_meta\":{\"world/task_id\":\"$3\"}}}" 2>/dev/null |
    sed -n 's/^data: //p;t;/^{/p' | python3 -c 'import json,sys
try:
    r = json.load(sys.stdin)
except Exception:
    print("noanswer"); sys.exit()
res = r.get("result") or {}
print("ok" if res.get("isError") is False else (res.get("content") or [{}])[0].get("text", json.dumps(r))[:300])'
}
committed() { # TASK [EPISODE]: committed outcomes of that task id
  "$SQLITE3_SHELL" -readonly "$DB" "SELECT count(*) FROM journal WHERE phase='outcome' AND status='committed' AND kind='invocation' AND subject='mcp:${2:-ep-a}:$1'"
}

start_d 1 || bail "daemon 1"
start_d 2 || bail "daemon 2"
is "$(callx 1 "$CRED" t-1a)/$(callx 2 "$CRED" t-1b)" "ok/ok" "two daemons on one store both serve a call"

# ---- revoke and mint while the daemons serve ----
CRED_R=$(printf '5%.0s' $(seq 64))
"$FIXTURE" session "$DB" "$CRED_R" ep-r '[]' +3600 || bail "fixture session"
is "$(callx 1 "$CRED_R" r-1)/$(callx 2 "$CRED_R" r-2)" "ok/ok" "control: the credential works on both daemons just before the revoke"
ID_R=$(printf '%s' "$CRED_R" | sha256sum | cut -d' ' -f1)
run_capture out err rc "$WORLDD" session revoke --store "$DB" "$ID_R"
is "$rc" 0 "session revoke runs while two daemons serve the store ($err)"
like "$(callx 1 "$CRED_R" r-3)" "unknown session credential|revoked" "daemon 1 refuses the revoked credential on the next call"
like "$(callx 2 "$CRED_R" r-4)" "unknown session credential|revoked" "daemon 2 too"
is "$(committed r-3 ep-r)$(committed r-4 ep-r)" "00" "... and commits nothing for them"

# ---- a batch re-checks its session per call: revoked between two calls ----
stop_d 2
PD="$T/pause"; mkdir -p "$PD"
start_d 3 WORLD_TEST_PAUSE=coord.session@2 WORLD_TEST_PAUSE_DIR="$PD" || bail "daemon 3"
CRED_B=$(printf '6%.0s' $(seq 64))
"$FIXTURE" session "$DB" "$CRED_B" ep-q '[]' +3600 || bail "fixture session"
batch='['
for i in 1 2 3; do batch="$batch{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"tools/call\",\"params\":{\"name\":\"tools_decho\",\"arguments\":{\"i\":$i},\"_meta\":{\"world/task_id\":\"b-$i\"}}},"; done
batch="${batch%,}]"
curl -sS -m 120 -X POST "${U[3]}/mcp/" -H "$(auth "$CRED_B")" "${MCP_HDRS[@]}" --data-binary "$batch" -o "$T/batch.out" 2>/dev/null &
bpid=$!
for _ in $(seq 1 600); do [ -e "$PD/coord.session.2.reached" ] && break; sleep 0.05; done
ok "$([ -e "$PD/coord.session.2.reached" ]; echo $?)" "the batch's second call is held before its session check (the first has run)"
run_capture out err rc "$WORLDD" session revoke --store "$DB" --episode ep-q
is "$rc" 0 "the batch's session is revoked while the batch runs"
touch "$PD/coord.session.2.go"
wait "$bpid"
summary=$(sed -n 's/^data: //p;t;/^\[/p' "$T/batch.out" | python3 -c 'import json,sys
a = json.load(sys.stdin)
a = sorted(a, key=lambda m: m["id"])
print(",".join("ok" if m.get("result", {}).get("isError") is False else "refused" for m in a))')
is "$summary" "ok,refused,refused" "a batch: the call before the revoke commits, the two after it are refused"
is "$(committed b-1 ep-q)$(committed b-2 ep-q)$(committed b-3 ep-q)" "100" "... only the first is committed"
stop_d 3

# ---- expiry between two calls of one batch ----
start_d 4 WORLD_TEST_PAUSE=coord.session@2 WORLD_TEST_PAUSE_DIR="$PD" || bail "daemon 4"
rm -f "$PD"/*
CRED_E=$(printf '7%.0s' $(seq 64))
"$FIXTURE" session "$DB" "$CRED_E" ep-e '[]' +3 || bail "fixture session"
exp=$(( $(date +%s) + 3 ))
curl -sS -m 120 -X POST "${U[4]}/mcp/" -H "$(auth "$CRED_E")" "${MCP_HDRS[@]}" --data-binary "$batch" -o "$T/batch.out" 2>/dev/null &
bpid=$!
for _ in $(seq 1 600); do [ -e "$PD/coord.session.2.reached" ] && break; sleep 0.05; done
while [ "$(date +%s)" -le "$exp" ]; do sleep 0.2; done # bounded: 4 s at most
touch "$PD/coord.session.2.go"
wait "$bpid"
summary=$(sed -n 's/^data: //p;t;/^\[/p' "$T/batch.out" | python3 -c 'import json,sys
a = sorted(json.load(sys.stdin), key=lambda m: m["id"])
print(",".join("ok" if m.get("result", {}).get("isError") is False else ("expired" if "expired" in json.dumps(m) else "other") for m in a))')
is "$summary" "ok,expired,expired" "a batch: the session expires between its first and second call; the rest are refused as expired"
stop_d 4

# ---- a publish while daemons serve: in tools/list on the next request ----
start_d 2 || bail "daemon 2 again"
tools() { curl -sS -m 30 -X POST "${U[$1]}/mcp/" -H "$(auth "$CRED")" "${MCP_HDRS[@]}" --data-binary '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' | sed -n 's/^data: //p;t;/^{/p'; }
unlike "$(tools 1)" "tests_dlate" "control: tests.late is not listed before it is published"
card() { curl -sS -m 30 "${U[$1]}/.well-known/agent-card.json" -H "$(auth "$CRED")" | python3 -c 'import json,sys; print(" ".join(sorted(s["id"] for s in json.load(sys.stdin)["skills"])))'; }
unlike "$(card 2)" "tests.late" "control: the agent card of daemon 2 does not list tests.late yet"
"$FIXTURE" publish "$DB" "$AILANG_LITE" tests.late "$top_srcdir/tests/interp/conformance/echo.ail" || bail "publish late"
like "$(tools 1)" "tests_dlate" "published while daemons serve: daemon 1 lists it on the next request"
like "$(tools 2)" "tests_dlate" "... and daemon 2"
like "$(card 2)" "tests.late" "... and daemon 2's agent card lists it on the next request"

# ---- three daemons, three clients each, kill -9 of one mid-load ----
start_d 3 || bail "daemon 3 again"
LOAD="$T/load"; mkdir -p "$LOAD"
client() { # DAEMON CLIENT: 12 calls, each acknowledged task id appended to its file
  local d=$1 c=$2 i
  for i in $(seq 1 12); do
    [ "$(callx "$d" "$CRED" "L$d-$c-$i")" = ok ] && echo "L$d-$c-$i" >> "$LOAD/ack.$d.$c"
    # every 4th call is also sent to the next daemon with the same task id
    if [ $((i % 4)) = 0 ]; then
      [ "$(callx $(( d % 3 + 1 )) "$CRED" "L$d-$c-$i")" = ok ] && echo "L$d-$c-$i" >> "$LOAD/dup.$d.$c"
    fi
  done
}
CL=()
for d in 1 2 3; do for c in 1 2 3; do client "$d" "$c" & CL+=($!); done; done
# kill daemon 2 once it has acknowledged a few calls
for _ in $(seq 1 600); do [ "$(cat "$LOAD"/ack.2.* 2>/dev/null | wc -l)" -ge 4 ] && break; sleep 0.05; done
kill -KILL "${P[2]}"; wait "${P[2]}" 2>/dev/null
for p in "${CL[@]}"; do wait "$p"; done
acked=$(cat "$LOAD"/ack.* 2>/dev/null | sort -u)
n_acked=$(printf '%s\n' "$acked" | grep -c .)
ok "$([ "$n_acked" -ge 60 ]; echo $?)" "the clients of the two live daemons were answered throughout ($n_acked acknowledged)"
ok "$([ "$(cat "$LOAD"/ack.1.* "$LOAD"/ack.3.* | wc -l)" -eq 72 ]; echo $?)" "every call to the daemons not killed was acknowledged (72 of 72)"
lost=0; twice=0
for t in $acked $(cat "$LOAD"/dup.* 2>/dev/null | sort -u); do
  n=$(committed "$t")
  [ "$n" = 0 ] && lost=$((lost + 1))
  [ "$n" -gt 1 ] && twice=$((twice + 1))
done
is "$lost" 0 "no acknowledged call is lost, the killed daemon's included"
is "$twice" 0 "no task id is committed twice (the same id sent to two daemons commits once)"
is "$("$SQLITE3_SHELL" -readonly "$DB" "SELECT count(*) FROM journal WHERE phase='outcome' AND status='committed' GROUP BY kind, subject HAVING count(*) > 1" | wc -l)" 0 "no (kind, subject) has two committed outcomes"
is "$("$SQLITE3_SHELL" -readonly "$DB" "SELECT (SELECT count(*) FROM log_entries) = (SELECT max(entry_index) FROM log_entries) AND (SELECT count(*) FROM log_entries l JOIN log_entries p ON p.entry_index = l.entry_index - 1 WHERE l.prev_entry_hash IS NOT p.entry_hash) = 0")" 1 "one chain: entries 1..N contiguous, each chained to the one before"
stop_d 1; stop_d 3
run_capture out err rc "$WORLDD" scan --store "$DB"
is "$rc:$out" "0:" "worldd scan is clean after three daemons and a kill -9 ($err)"
done_testing
