#!/bin/bash
# worldd serve: fair shares of the call workers and the MCP batch cap
# (docs/daemon.md, "Fair shares").
#  - the --session-share flag: range and default;
#  - one episode (two sessions) floods the daemon with more calls than it
#    has workers: it holds only its share, and another episode's call is
#    run and answered while every one of the flood's calls is still held;
#    control: with --session-share = --capacity (the protection off) the
#    other episode's call waits behind the flood;
#  - a batch over the cap: the cap's calls run and commit, each request
#    beyond it is answered with an error naming the cap and commits
#    nothing; control: a batch of exactly the cap runs whole.
# The fair-share part holds the call workers at the test-only pause points
# of common/pause.h (daemon.worker: a worker took a job, before it runs it;
# daemon.queued: the HTTP thread queued a job), so which job a free worker
# takes is observed, not timed. It is skipped in a build without
# --enable-test-hooks (scripts/test.sh builds with them).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
command -v curl >/dev/null || { skip "curl not installed" "daemon fair-share tests"; done_testing; exit; }
daemon_setup
"$FIXTURE" publish "$DB" "$AILANG_LITE" tests.slow "$top_srcdir/tests/daemon/slow.ail" || bail "fixture publish slow"
CRED_A2=$(printf '5%.0s' $(seq 64)) # a second session of episode ep-a (CRED's)
"$FIXTURE" session "$DB" "$CRED_A2" ep-a '[]' +3600 || bail "fixture session"

# ---- the flag ----
run_capture out err rc "$WORLDD" serve --store "$DB" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 --session-share 0
is "$rc" 2 "--session-share 0: usage error"
like "$err" "--session-share needs a number 1-256, got '0'" "... naming the range"
run_capture out err rc "$WORLDD" serve --store "$DB" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 --session-share 9
is "$rc/$(printf '%s\n' "$err" | wc -l | tr -d ' ')" "2/1" "--session-share 9 over the default capacity 8: usage error, one line"
like "$err" "--session-share 9 is over the capacity \(8 call workers\)" "... naming the capacity"
run_capture out err rc "$WORLDD" serve --store "$DB" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 --session-share 5 --capacity 4
is "$rc" 2 "--session-share 5 --capacity 4: usage error (the order of the flags does not matter)"
run_capture out err rc "$WORLDD" serve --help
like "$out" "--session-share N" "serve --help names --session-share"
ok "$([ ! -e "$DB.operator-token" ]; echo $?)" "the refused start-ups left no token file"

daemon_start --capacity 5 || bail "daemon did not start"
like "$(cat "$T/err")" "listening url=.* capacity=5 session_share=2 " "the default share is capacity/2: 2 of 5 workers"
daemon_stop

# ---- fair shares ----
# The calls of the flood: curl in the background; each appends its name to
# $S/order when its answer is in.
call() { # NAME CRED TOOL
  (curl -sS -m 150 -o "$S/$1.json" -w '%{http_code}' -H "$(auth "$2")" "${MCP_HDRS[@]}" \
     --data-binary "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$3\",\"arguments\":{\"who\":\"$1\"}}}" \
     "$URL/mcp/" > "$S/$1.code" 2>/dev/null
   echo "$1" >> "$S/order") &
}
await() { # FILE: wait until it exists, at most 60 s
  local i
  for i in $(seq 1 1200); do [ -e "$1" ] && return 0; sleep 0.05; done
  diag "waited 60 s for $1"
  return 1
}
answers() { [ -e "$S/order" ] && wc -l < "$S/order" | tr -d ' ' || echo 0; }
await_answers() { # N: wait until N answers are in, at most 60 s
  local i
  for i in $(seq 1 1200); do [ "$(answers)" -ge "$1" ] && return 0; sleep 0.05; done
  diag "waited 60 s for $1 answers; have $(answers)"
  return 1
}
go() { local k; for k in "$@"; do : > "$PD/daemon.worker.$k.go"; done; }
flood() { # A's six slow calls, three on each of its two sessions, all queued
  local i
  for i in 1 2 3; do call "a$i" "$CRED" tests_dslow; done
  for i in 4 5 6; do call "a$i" "$CRED_A2" tests_dslow; done
  await "$PD/daemon.queued.6.reached" && : > "$PD/daemon.queued.6.go"
}
settle() { sleep 0.3; } # only lets a wrong pick show; no assertion depends on how long a call takes
unheld() { # every worker arrival goes on from now on; wait for all N answers
  go $(seq 1 20)
  await_answers "$1"
}
ok_answers() { # NAMES...: how many answered 200 with a committed result
  local n=0 f
  for f in "$@"; do
    [ "$(cat "$S/$f.code" 2>/dev/null)" = 200 ] && grep -q '"isError":false' "$S/$f.json" && n=$((n + 1))
  done
  echo "$n"
}

if ! grep -q -- '-DWORLD_TEST_HOOKS=1' "$top_builddir/Makefile"; then
  for t in "share: the flood holds 2 of 4 workers" "share: the flood's other calls wait" \
           "share: B is taken by a free worker" "share: B answered before any A call" "share: all answered" \
           "control: the flood holds every worker" "control: B waits" "control: B after A's queued calls" \
           "control: all answered"; do
    skip "built without --enable-test-hooks (no pause points)" "$t"
  done
else
  S=$T/share; PD=$T/pause; mkdir -p "$S" "$PD"
  export WORLD_TEST_PAUSE=daemon.worker,daemon.queued@6 WORLD_TEST_PAUSE_DIR=$PD
  daemon_start --capacity 4 || bail "daemon did not start"
  unset WORLD_TEST_PAUSE WORLD_TEST_PAUSE_DIR
  flood
  await "$PD/daemon.worker.1.reached"; await "$PD/daemon.worker.2.reached"
  settle
  ok "$([ -e "$PD/daemon.worker.2.reached" ] && [ ! -e "$PD/daemon.worker.3.reached" ]; echo $?)" \
    "share 2 of 4 (the default): episode ep-a's six calls over two sessions hold two workers"
  is "$(answers)" 0 "... and its four other calls wait, with two workers free, none refused"
  call b "$CRED_GRANT" tools_decho # episode ep-b
  await "$PD/daemon.worker.3.reached"
  ok $? "another episode's call is taken by a free worker at once, ahead of ep-a's four queued calls"
  go 3
  await_answers 1
  is "$(cat "$S/order")/$(ok_answers b)" "b/1" "... and answered (committed) while every one of ep-a's calls is still held or queued"
  unheld 7
  is "$(ok_answers a1 a2 a3 a4 a5 a6)" 6 "then all six of ep-a's calls are run and answered, none refused"
  daemon_stop

  # Control: the share = the capacity, so the protection is off.
  rm -rf "$S" "$PD"; mkdir -p "$S" "$PD"
  export WORLD_TEST_PAUSE=daemon.worker,daemon.queued@6,daemon.queued@7 WORLD_TEST_PAUSE_DIR=$PD
  daemon_start --capacity 4 --session-share 4 || bail "daemon did not start"
  unset WORLD_TEST_PAUSE WORLD_TEST_PAUSE_DIR
  flood
  for k in 1 2 3 4; do await "$PD/daemon.worker.$k.reached"; done
  ok "$([ -e "$PD/daemon.worker.4.reached" ]; echo $?)" "control, --session-share 4 of 4: ep-a's calls hold all four workers"
  call b "$CRED_GRANT" tools_decho
  await "$PD/daemon.queued.7.reached" && : > "$PD/daemon.queued.7.go" # B is queued, behind a5 and a6
  settle
  ok "$([ ! -e "$PD/daemon.worker.5.reached" ]; echo $?)" "control: the other episode's call waits for a worker"
  # one worker freed at a time: each takes the oldest queued job
  go 1; await_answers 1; await "$PD/daemon.worker.5.reached"
  go 5; await_answers 2; await "$PD/daemon.worker.6.reached"
  go 6; await_answers 3; await "$PD/daemon.worker.7.reached"
  go 7; await_answers 4
  is "$(grep -c '^a' <(sed '/^b$/q' "$S/order"))/$(ok_answers b)" "3/1" \
    "control: it is answered only after three of ep-a's calls (the two queued before it among them)"
  unheld 7
  is "$(ok_answers a1 a2 a3 a4 a5 a6)" 6 "control: then ep-a's other calls are answered"
  daemon_stop
fi

# ---- the MCP batch cap ----
daemon_start || bail "daemon did not start"
head_rev() { http GET /v1/head -H "$(auth "$(cat "$DB.operator-token")")"; jget revision <<<"$BODY"; } # the whole log
batch() { # FIRST LAST [extra]: tools/call ids FIRST..LAST as one batch (+ extra messages)
  python3 -c 'import json,sys
a, b = int(sys.argv[1]), int(sys.argv[2])
m = [{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "tools_decho", "arguments": {"i": i}}} for i in range(a, b + 1)]
if len(sys.argv) > 3: m.append({"jsonrpc": "2.0", "method": "notifications/initialized"})
print(json.dumps(m))' "$@"
}
summary() { # of a batch answer: "results/errors/error ids/cap named in every error"
  sse_json | python3 -c 'import json,sys
a = json.load(sys.stdin)
res = [m for m in a if "result" in m and m["result"].get("isError") is False]
err = [m for m in a if "error" in m]
print("%d/%d/%s/%d" % (len(res), len(err), ",".join(str(m["id"]) for m in err),
      all(m["error"]["code"] == -32600 and "at most 32 messages" in m["error"]["message"] for m in err)))'
}
R0=$(head_rev); [ "$R0" = null ] && R0=0
mcp "$CRED" "$(batch 1 32)"
is "$STATUS/$(summary)" "200/32/0//1" "control: a batch of exactly 32 tools/call: 32 results"
R1=$(head_rev)
is "$((R1 - R0))" 32 "... and 32 log entries"
mcp "$CRED" "$(batch 1 35 notification)"
is "$STATUS/$(summary)" "200/32/3/33,34,35/1" "a batch of 35 tools/call and a notification: 32 results, 3 errors naming the cap (ids 33-35)"
R2=$(head_rev)
is "$((R2 - R1))" 32 "... and the log grew by exactly 32 entries"
like "$(cat "$T/err")" "rpc=batch=36,over_cap=4$" "the request log says how many messages were over the cap"
daemon_stop
is "$DRC" 0 "the daemon stops cleanly"

# ---- episode quotas: pure calls are metered too (docs/broker.md, "Episode quotas") ----
run_capture out err rc "$WORLDD" serve --store "$DB" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 --episode-calls 0
is "$rc" 2 "--episode-calls 0: usage error"
like "$err" "--episode-calls needs a positive number or -1 \(no limit\), got '0'" "... naming what it takes"
CRED_Q=$(printf '7%.0s' $(seq 64)); CRED_Q2=$(printf '8%.0s' $(seq 64))
"$FIXTURE" session "$DB" "$CRED_Q" ep-quota '[]' +3600 || bail "fixture session"
"$FIXTURE" session "$DB" "$CRED_Q2" ep-quota-2 '[]' +3600 || bail "fixture session"
daemon_start --episode-calls 2 || bail "daemon did not start"
qcall() { # CRED ID TASK (the arguments are {"q": TASK})
  mcp "$1" "{\"jsonrpc\":\"2.0\",\"id\":$2,\"method\":\"tools/call\",\"params\":{\"name\":\"tools_decho\",\"arguments\":{\"q\":\"$3\"},\"_meta\":{\"world/task_id\":\"$3\"}}}"
  sse_json | python3 -c 'import json,sys; r=json.load(sys.stdin)["result"]; print("%s %s" % (r["isError"], r["content"][0]["text"][:200]))'
}
Q0=$(head_rev)
like "$(qcall "$CRED_Q" 1 q1)" "^False" "quota: the episode's call 1 of 2 is answered"
like "$(qcall "$CRED_Q" 2 q2)" "^False" "quota: call 2 of 2 is answered"
like "$(qcall "$CRED_Q" 3 q3)" "^True .*QuotaExceeded.*call quota \(2 of 2 calls committed\)" "quota: call 3 is refused QuotaExceeded, naming the quota"
is "$(( $(head_rev) - Q0 ))" 2 "quota: the refused call committed nothing"
like "$(qcall "$CRED_Q" 4 q1)" "^False" "quota: a retry of a committed task id is still answered"
like "$(qcall "$CRED_Q2" 5 q5)" "^False" "control: another episode's call is answered (the quota is per episode)"
daemon_stop
is "$DRC" 0 "the daemon stops cleanly"
done_testing
