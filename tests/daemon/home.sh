#!/bin/bash
# tests/daemon/home.sh: an episode's home (issue 44 items 3 and 6;
# docs/operations.md "Past one machine", docs/daemon.md "Episode homes"),
# on a throwaway PostgreSQL cluster with daemons on different worktree
# roots (each root stands for one host's disk; --host-id names the host):
#   - a write through daemon 1 (host h1) claims ep1 for h1 and lands in
#     ws1; an effectful call of ep1 through daemon 2 (host h2) -- a write
#     and a read -- is answered HTTP 307 with Location h1's /mcp/ and a
#     JSON-RPC error NotHome naming h1's URL, nothing is committed and
#     nothing is written under ws2;
#   - the control: a daemon with the feature off (WORLD_TEST_NO_HOMES=1, a
#     test build's hook) runs the same write, and it lands in its own root
#     (the old wrong behaviour: the episode's files in two places);
#   - pure calls and read routes through daemon 2 work;
#   - two daemons racing to claim a fresh episode (the pause point
#     home.claim holds daemon 1 after it saw no home, daemon 2 claims and
#     writes, then daemon 1 goes on): exactly one row, daemon 2's; daemon 1
#     answers 307 naming daemon 2 and writes nothing;
#   - `worldd episode move` (attended): refused with CI=true (exit 20,
#     nothing moved), refused while the old home's lease is live (exit 8),
#     moved with --force through a pseudo-terminal; then daemon 2 runs
#     ep1's writes and daemon 1 redirects them to daemon 2;
#   - SQLite without --host-id: homes off, one log line.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/pg_cluster.sh"
. "$top_srcdir/tests/daemon/lib.sh"
command -v curl >/dev/null || { skip "curl not installed" "home tests"; done_testing; exit; }
PFIX="$top_builddir/tests/packages/packages-fixture"
PTY="$top_srcdir/tests/publish/pty.py"
[ -x "$PFIX" ] || { skip "no tests/packages/packages-fixture" "home"; done_testing; exit; }
T=$(mktemp -d "${TMPDIR:-/tmp}/world-home.XXXXXX")
chmod 755 "$T"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; pg_cluster_cleanup; rm -rf "$T"' EXIT
pg_cluster_or_skip "episode homes on PostgreSQL"
trap 'for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; pg_cluster_cleanup; rm -rf "$T"' EXIT
psqlc() { "$PG_BIN/psql" -X -q -A -t -h "$PG_SOCK" -p "$PG_PORT" -U worldsu -d world "$@"; }

GR=(Workspace.Read=worktree:1000 Workspace.Write=worktree:1000)
C1=$("$PFIX" "$T" "$top_srcdir" ep1 "$top_srcdir/packages/se-tools/transitions.json" "${GR[@]}") || bail "packages fixture"
C2=$("$PFIX" "$T" "$top_srcdir" ep2 "$top_srcdir/packages/quickstart/transitions.json" "${GR[@]}") || bail "packages fixture 2"
C3=$("$PFIX" "$T" "$top_srcdir" ep3 "$top_srcdir/packages/se-tools/transitions.json" "${GR[@]}") || bail "packages fixture 3"
"$WORLDD" store copy "$T/world.db" "$PG_URI" > "$T/copy.out" 2> "$T/copy.err" || bail "store copy: $(cat "$T/copy.err")"
XDG_CACHE_HOME=$T/cache; export XDG_CACHE_HOME

declare -a U P
start_d() { # N HOST [ENV...]: worldd serve on the URI, worktree root $T/wsN
  local n=$1 h=$2; shift 2
  mkdir -p "$T/ws$n"
  env "$@" "$WORLDD" serve --store "$PG_URI" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 --host-id "$h" \
    --workspace-root "$T/ws$n" --tool-ailang-bin "$AILANG_LITE" >"$T/out$n" 2>"$T/err$n" &
  P[$n]=$!; PIDS+=("${P[$n]}")
  U[$n]=""
  for _ in $(seq 1 300); do
    U[$n]=$(sed -n 's/^worldd listening on //p' "$T/out$n")
    [ -n "${U[$n]}" ] && return 0
    kill -0 "${P[$n]}" 2>/dev/null || break
    sleep 0.1
  done
  diag "daemon $n did not start: $(cat "$T/err$n")"; return 1
}
stop_d() { kill -TERM "${P[$1]}" 2>/dev/null; wait "${P[$1]}" 2>/dev/null; }
call() { # N CRED TOOL ARGS TASK: one tools/call through daemon N; sets STATUS, LOC, BODY
  local h
  h=$(curl -sS -m 120 -X POST -D - -o "$T/body" -H "$(auth "$2")" "${MCP_HDRS[@]}" --data-binary \
    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"$3\",\"arguments\":$4,\"_meta\":{\"world/task_id\":\"$5\"}}}" \
    "${U[$1]}/mcp/" 2>"$T/curlerr")
  STATUS=$(printf '%s' "$h" | sed -n '1s/^HTTP\/[0-9.]* \([0-9]*\).*/\1/p')
  LOC=$(printf '%s' "$h" | tr -d '\r' | sed -n 's/^[Ll]ocation: //p')
  BODY=$(cat "$T/body")
}
entries() { psqlc -c "SELECT count(*) FROM log_entries"; }
home_of() { psqlc -c "SELECT host || ' ' || url FROM episode_homes WHERE episode = '$1'"; }
W() { printf '{"path":"%s","content":"%s"}' "$1" "$2"; }

start_d 1 h1 || bail "daemon 1"
start_d 2 h2 || bail "daemon 2"
like "$(cat "$T/err1")" "home: host=h1 url=${U[1]} lease_s=120" "daemon 1 logs its host id and advertised URL (default: its listening URL)"

# ---- a write through daemon 1 claims ep1 for h1
call 1 "$C1" ailang-write "$(W a.txt one)" w1
is "$STATUS:$(sse_json | jget result.isError)" "200:false" "ailang-write of ep1 through daemon 1: committed"
is "$(cat "$T/ws1/ep1/a.txt" 2>/dev/null)" one "... the file is in daemon 1's root (ws1/ep1/a.txt)"
is "$(home_of ep1)" "h1 ${U[1]}" "... and ep1's home is h1 at daemon 1's URL (episode_homes)"
n0=$(entries)

# ---- an effectful call of ep1 through daemon 2: redirected, nothing run
call 2 "$C1" ailang-write "$(W b.txt two)" w2
is "$STATUS" 307 "ailang-write of ep1 through daemon 2: HTTP 307"
is "$LOC" "${U[1]}/mcp/" "... Location is daemon 1's /mcp/"
J=$(sse_json)
is "$(jget error.code <<<"$J"):$(jget error.data.class <<<"$J"):$(jget error.data.host <<<"$J"):$(jget error.data.url <<<"$J")" \
  "-32030:NotHome:h1:${U[1]}" "... the body: a JSON-RPC error NotHome naming host h1 and daemon 1's URL"
like "$(jget error.message <<<"$J")" "episode ep1 has its home on host h1 \\(${U[1]}\\)" "... its message names the home"
is "$(jget id <<<"$J")" 7 "... with the request's id"
ok "$([ ! -e "$T/ws2/ep1" ]; echo $?)" "nothing is written under daemon 2's root (no ws2/ep1)"
call 2 "$C1" ailang-read '{"path":"a.txt"}' r1
is "$STATUS:$(jget error.data.class <<<"$(sse_json)")" "307:NotHome" "ailang-read of ep1 through daemon 2 (an effect: Workspace.Read): 307 NotHome, not a \"no such file\" result"
is "$(entries)" "$n0" "... nothing committed for either"
like "$(cat "$T/err2")" "status=307 ms=[0-9]+ invocation_id=mcp:ep1:w2 rpc=tools/call,error=NotHome,home=h1" "daemon 2's request log names the redirect and the invocation the home will run"
# the same read through the home answers the file
call 1 "$C1" ailang-read '{"path":"a.txt"}' r2
is "$STATUS:$(sse_json | jget result.structuredContent.content)" "200:one" "the same ailang-read through daemon 1 (the home): the file's content"

# ---- pure calls and reads run anywhere
call 2 "$C2" tools_decho '{"n":5}' p1
is "$STATUS:$(sse_json | jget result.structuredContent.echo.n)" "200:5" "a pure call (tools.echo, ep2) through daemon 2: committed"
last=$(sse_json | jget 'result._meta.world/invocation.entry_index')
call 2 "$C1" tools_decho '{"n":6}' p2
is "$STATUS:$(sse_json | jget result.structuredContent.echo.n)" "200:6" "a pure call of ep1 (h1's episode) through daemon 2: committed"
http_on() { curl -sS -m 30 -o "$T/rbody" -w '%{http_code}' -H "$(auth "$2")" "${U[$1]}$3" 2>/dev/null; }
is "$(http_on 2 "$C1" /v1/log/1)" 200 "GET /v1/log/1 (ep1's write) through daemon 2: 200"
is "$(http_on 2 "$C2" "/v1/log/$last")" 200 "GET /v1/log/$last (ep2's call) through daemon 2: 200"
is "$(home_of ep2)" "" "... pure calls claim no home (ep2 has none yet)"

HOOKS=0
grep -q -- '-DWORLD_TEST_HOOKS=1' "$top_builddir/Makefile" && HOOKS=1
if [ "$HOOKS" = 1 ]; then
# ---- the control: homes off, the write lands on the other host
start_d 3 h3 WORLD_TEST_NO_HOMES=1 || bail "daemon 3"
like "$(cat "$T/err3")" "home: off \\(WORLD_TEST_NO_HOMES=1" "control: daemon 3 runs with homes off (test hook)"
call 3 "$C1" ailang-write "$(W c.txt three)" w3
is "$STATUS:$(sse_json | jget result.isError)" "200:false" "control: ailang-write of ep1 through daemon 3 is run"
is "$(cat "$T/ws3/ep1/c.txt" 2>/dev/null)" three "control: ... and lands in daemon 3's root: ep1's files in two places (the bug homes fix)"
stop_d 3

else
  skip "built without --enable-test-hooks (WORLD_TEST_NO_HOMES)" "the control: homes off, the write lands on the other host"
fi

# ---- two daemons racing to claim a fresh episode (ep2's first effect)
stop_d 1
OLD1=${U[1]} # ep1's row keeps this URL until the home's next effectful call of it renews the row
PD="$T/pause"; mkdir -p "$PD"
# daemon 1 again: its first home.claim arrival is ep2's (ep1 has its row: no claim)
if [ "$HOOKS" = 1 ]; then
start_d 1 h1 WORLD_TEST_PAUSE=home.claim@1 WORLD_TEST_PAUSE_DIR="$PD" || bail "daemon 1 (paused)"
( call 1 "$C2" ailang-write "$(W r.txt from-1)" race1; printf '%s %s %s\n' "$STATUS" "$LOC" "$(sse_json | jget error.data.url)" > "$T/race1" ) & r1=$!
for _ in $(seq 1 1200); do [ -e "$PD/home.claim.1.reached" ] && break; sleep 0.05; done
ok "$([ -e "$PD/home.claim.1.reached" ]; echo $?)" "race: daemon 1 saw no home for ep2 and is held before its claim"
is "$(home_of ep2)" "" "race: ... no row for ep2 yet"
call 2 "$C2" ailang-write "$(W r.txt from-2)" race2
is "$STATUS:$(sse_json | jget result.isError)" "200:false" "race: daemon 2 claims ep2 and its write commits meanwhile"
is "$(home_of ep2)" "h2 ${U[2]}" "race: ... ep2's home is h2"
touch "$PD/home.claim.1.go"
wait "$r1"
read -r s1 l1 u1 < "$T/race1"
is "$s1:$l1:$u1" "307:${U[2]}/mcp/:${U[2]}" "race: daemon 1, released, loses: 307 naming daemon 2"
is "$(psqlc -c "SELECT count(*) || ' ' || min(host) FROM episode_homes WHERE episode = 'ep2'")" "1 h2" "race: exactly one home row for ep2, daemon 2's"
is "$(cat "$T/ws2/ep2/r.txt" 2>/dev/null):$([ -e "$T/ws1/ep2" ] && echo ws1 || echo none)" "from-2:none" \
  "race: the file is daemon 2's, nothing of ep2 under daemon 1's root"

else
  skip "built without --enable-test-hooks (no pause points)" "race: two daemons claiming one fresh episode"
  start_d 1 h1 || bail "daemon 1 (again)"
  call 2 "$C2" ailang-write "$(W r.txt from-2)" race2
  is "$STATUS:$(home_of ep2)" "200:h2 ${U[2]}" "(no race) daemon 2 claims ep2"
  call 1 "$C2" ailang-write "$(W r.txt from-1)" race1
  is "$STATUS:$LOC" "307:${U[2]}/mcp/" "(no race) daemon 1 redirects ep2 to daemon 2"
fi

# ---- the operator moves ep1's home from h1 to h2
run_capture out err rc "$WORLDD" episode homes --store "$PG_URI"
like "$out" "episode ep1 home=h1 url=$OLD1 lease_until=[0-9T:-]+Z live" "worldd episode homes lists ep1 on h1, lease live"
like "$out" "episode ep2 home=h2 url=${U[2]} " "... and ep2 on h2"
CI=true run_capture out err rc "$WORLDD" episode move ep1 --to h2 --url "${U[2]}" --force --store "$PG_URI"
is "$rc:$(home_of ep1)" "20:h1 $OLD1" "episode move with CI=true: refused (exit 20), ep1 still on h1"
like "$err" "STOP fence=ci" "... the STOP line names the ci fence"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '[y/N] ' --answer y --out "$T/mv.out" --err "$T/mv.err" --tty "$T/mv.tty" -- \
  "$WORLDD" episode move ep1 --to h2 --url "${U[2]}" --store "$PG_URI"
is "$?:$(home_of ep1)" "8:h1 $OLD1" "episode move while h1's lease is live (no --force): refused, exit 8, nothing moved"
like "$(cat "$T/mv.err")" "holds a live lease until" "... naming the lease"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '[y/N] ' --answer y --out "$T/mv.out" --err "$T/mv.err" --tty "$T/mv.tty" -- \
  "$WORLDD" episode move ep1 --to h2 --url "${U[2]}" --force --store "$PG_URI"
is "$?:$(home_of ep1)" "0:h2 ${U[2]}" "episode move --force confirmed at a terminal: exit 0, ep1's home is h2"
like "$(cat "$T/mv.tty")" "Its worktree is not moved by this verb: copy WORKSPACE_ROOT/ep1 from h1 to h2 first" "... the prompt says the operator moves the worktree"
like "$(cat "$T/mv.out")" "episode ep1 home=h2 url=${U[2]} was=h1 worktree=move ROOT/ep1 from h1 to h2" "... and its line says so"
mkdir -p "$T/ws2/ep1" && cp -a "$T/ws1/ep1/." "$T/ws2/ep1/" # the operator moves the worktree
call 2 "$C1" ailang-read '{"path":"a.txt"}' r3
is "$STATUS:$(sse_json | jget result.structuredContent.content)" "200:one" "after the move: ep1's read through daemon 2 (the new home) finds the moved file"
call 1 "$C1" ailang-write "$(W d.txt four)" w4
is "$STATUS:$LOC" "307:${U[2]}/mcp/" "... and daemon 1 redirects ep1's write to daemon 2"
ok "$([ ! -e "$T/ws1/ep1/d.txt" ]; echo $?)" "... writing nothing under daemon 1's root"
# A2A: the same answer on /a2a/
h=$(curl -sS -m 60 -X POST -D - -o "$T/body" -H "$(auth "$C1")" -H 'Content-Type: application/json' --data-binary \
  '{"jsonrpc":"2.0","id":3,"method":"tasks/send","params":{"id":"a2a-w","message":{"role":"user","parts":[{"type":"data","data":{"path":"e.txt","content":"five"}}]},"metadata":{"skill_id":"ailang-write"}}}' \
  "${U[1]}/a2a/" 2>"$T/curlerr")
is "$(printf '%s' "$h" | sed -n '1s/^HTTP\/[0-9.]* \([0-9]*\).*/\1/p'):$(printf '%s' "$h" | tr -d '\r' | sed -n 's/^[Ll]ocation: //p')" \
  "307:${U[2]}/a2a/" "A2A tasks/send of ep1's ailang-write through daemon 1: 307 to daemon 2's /a2a/"
is "$(jget error.data.class < "$T/body"):$(jget error.data.url < "$T/body")" "NotHome:${U[2]}" "... the JSON-RPC error NotHome naming daemon 2"
ok "$([ ! -e "$T/ws1/ep1/e.txt" ]; echo $?)" "... nothing written under daemon 1's root"
stop_d 1

# ---- the lease: renewed by the home's calls, never handing the episode over by itself
mkdir -p "$T/ws5"
"$WORLDD" serve --store "$PG_URI" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 --host-id h5 --home-lease 2 \
  --workspace-root "$T/ws5" --tool-ailang-bin "$AILANG_LITE" >"$T/out5" 2>"$T/err5" & P[5]=$!; PIDS+=("${P[5]}")
for _ in $(seq 1 300); do U[5]=$(sed -n 's/^worldd listening on //p' "$T/out5"); [ -n "${U[5]}" ] && break; sleep 0.1; done
lease_of() { psqlc -c "SELECT lease_until FROM episode_homes WHERE episode = '$1'"; }
call 5 "$C3" ailang-write "$(W l.txt a)" l1
l1=$(lease_of ep3)
is "$STATUS:$(home_of ep3)" "200:h5 ${U[5]}" "--home-lease 2: ep3's first write through daemon 5 claims it for h5"
sleep 2.2 # past half the 2 s lease, whatever the second it was claimed in
call 5 "$C3" ailang-write "$(W l.txt b)" l2
l2=$(lease_of ep3)
ok "$([ "$STATUS" = 200 ] && [ "$l2" -gt "$l1" ]; echo $?)" "... a write past half the lease renews it (lease_until $l1 -> $l2)"
kill -TERM "${P[5]}"; wait "${P[5]}" 2>/dev/null
sleep 3.2 # past the renewed lease
call 2 "$C3" ailang-write "$(W l.txt c)" l3
is "$STATUS:$LOC" "307:${U[5]}/mcp/" "h5 stopped and its lease expired: ep3's write through daemon 2 is still redirected to h5 (no automatic takeover)"
like "$(jget error.message <<<"$(sse_json)")" "lease has expired: if its host is gone, an operator moves the episode \(worldd episode move\)" \
  "... the NotHome message says the lease expired and names the move"
ok "$([ ! -e "$T/ws2/ep3" ]; echo $?)" "... nothing of ep3 under daemon 2's root"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '[y/N] ' --answer y --out "$T/mv3.out" --err "$T/mv3.err" --tty "$T/mv3.tty" -- \
  "$WORLDD" episode move ep3 --to h2 --url "${U[2]}" --store "$PG_URI"
is "$?:$(home_of ep3)" "0:h2 ${U[2]}" "an expired lease: episode move without --force, confirmed at a terminal, moves ep3 to h2"
mkdir -p "$T/ws2/ep3" && cp -a "$T/ws5/ep3/." "$T/ws2/ep3/"
call 2 "$C3" ailang-read '{"path":"l.txt"}' l4
is "$STATUS:$(sse_json | jget result.structuredContent.content)" "200:b" "... and daemon 2 serves it, the moved file read back"
stop_d 2

# ---- SQLite with --host-id: two hosts of one SQLite store redirect as on PostgreSQL
"$WORLDD" serve --store "$T/world.db" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 --host-id s1 --workspace-root "$T/wss1" \
  --tool-ailang-bin "$AILANG_LITE" >"$T/outs1" 2>"$T/errs1" & P[7]=$!; PIDS+=("${P[7]}")
"$WORLDD" serve --store "$T/world.db" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 --host-id s2 --workspace-root "$T/wss2" \
  --tool-ailang-bin "$AILANG_LITE" >"$T/outs2" 2>"$T/errs2" & P[8]=$!; PIDS+=("${P[8]}")
for _ in $(seq 1 300); do
  U[7]=$(sed -n 's/^worldd listening on //p' "$T/outs1"); U[8]=$(sed -n 's/^worldd listening on //p' "$T/outs2")
  [ -n "${U[7]}" ] && [ -n "${U[8]}" ] && break; sleep 0.1
done
call 7 "$C1" ailang-write "$(W q.txt s1)" sq-1
is "$STATUS" 200 "SQLite, --host-id s1: ep1's write through daemon s1 runs"
call 8 "$C1" ailang-write "$(W q.txt s2)" sq-2
is "$STATUS:$LOC:$([ -e "$T/wss2/ep1" ] && echo written || echo none)" "307:${U[7]}/mcp/:none" \
  "... through daemon s2 (--host-id s2): 307 to s1, nothing written under its root"
kill -TERM "${P[7]}" "${P[8]}"; wait "${P[7]}" "${P[8]}" 2>/dev/null
"$SQLITE3_SHELL" "$T/world.db" "DELETE FROM episode_homes" || bail "sqlite: clear homes"

# ---- SQLite without --host-id: homes off (one host, always home)
mkdir -p "$T/wsq"
"$WORLDD" serve --store "$T/world.db" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 --workspace-root "$T/wsq" \
  --tool-ailang-bin "$AILANG_LITE" >"$T/outq" 2>"$T/errq" & PQ=$!; PIDS+=("$PQ")
for _ in $(seq 1 300); do UQ=$(sed -n 's/^worldd listening on //p' "$T/outq"); [ -n "$UQ" ] && break; sleep 0.1; done
U[9]=$UQ
like "$(cat "$T/errq")" "home: off \\(a SQLite store without --host-id" "SQLite without --host-id: homes off"
call 9 "$C1" ailang-write "$(W s.txt sq)" sq1
is "$STATUS:$(cat "$T/wsq/ep1/s.txt" 2>/dev/null)" "200:sq" "... an effectful call runs as before"
is "$("$SQLITE3_SHELL" "$T/world.db" "SELECT count(*) FROM episode_homes")" 0 "... and claims nothing"
kill -TERM "$PQ"; wait "$PQ" 2>/dev/null
done_testing
