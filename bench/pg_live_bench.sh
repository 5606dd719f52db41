#!/bin/bash
# bench/pg_live_bench.sh: daemons on PostgreSQL beside one daemon on SQLite
# (issue 26, item 6), side by side in one run. One store is made on SQLite
# (bootstrap, the quickstart and se-tools packages, a session) and copied
# into a throwaway PostgreSQL cluster with durable commits (fsync=on,
# synchronous_commit=on: PG_CLUSTER_DURABLE=1, printed). One `worldd serve`
# runs on the SQLite file and three on the database, all kept running; each
# row sends MCP tools/call of tools_decho (pure) or ailang-read
# (Workspace.Read, effectful) from the same number of clients (spread over
# the row's daemons) to 1 SQLite daemon, or 1, 2 or 3 PostgreSQL daemons.
# The rows alternate round after round (the order reversed in even rounds),
# as bench/live_bench.sh does: on a shared 2-core machine only medians of
# alternating rounds say anything. Per row: calls/s, p50 and p99 (the
# bench/live_bench client), the CPU per call of every daemon and its
# descendants (capsules), and the store's share of a call: the daemons'
# own commit_ms over the request's ms (their request log lines: the time a
# call spends in its store transaction, on either backend), and for the
# PostgreSQL rows the server's CPU per call (the postmaster and its
# children, from /proc). The end prints the medians and the ratio
# 3 PostgreSQL daemons / 1 SQLite daemon per tool. The store's own append
# rate on each backend is bench/store_bench.sh's. Figures only, never
# judged. Env: top_builddir, top_srcdir; PG_LIVE_BENCH_CALLS (300 per row),
# PG_LIVE_BENCH_CLIENTS (6), PG_LIVE_BENCH_ROUNDS (5).
set -e
B=$top_builddir; S=$top_srcdir
WORLDD=$B/cli/worldd; AIL=$B/interp/ailang-lite; PTY=$S/tests/publish/pty.py
CALLS=${PG_LIVE_BENCH_CALLS:-300}; CLIENTS=${PG_LIVE_BENCH_CLIENTS:-6}; ROUNDS=${PG_LIVE_BENCH_ROUNDS:-5}
. "$S/tests/pg_cluster.sh"
if ! pg_cluster_find || ! grep -q -- '-DWORLD_HAVE_PG=1' "$B/Makefile"; then
  echo "pg_live_bench: skipped (postgresql-15 not installed, or built without PostgreSQL)"
  exit 0
fi
T=$(mktemp -d /tmp/world-pglbench.XXXXXX); PIDS=()
chmod 755 "$T"
trap 'for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; pg_cluster_cleanup; rm -rf "$T"' EXIT
PG_CLUSTER_DURABLE=1 pg_cluster_start || { echo "pg_live_bench: the throwaway cluster did not start" >&2; exit 1; }
trap 'for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; pg_cluster_cleanup; rm -rf "$T"' EXIT
XDG_CACHE_HOME=$T/cache; export XDG_CACHE_HOME
DB=$T/world.db; mkdir -p "$T/ws/bench"; printf 'hello, world\n' > "$T/ws/bench/hello.txt"
"$WORLDD" epoch bootstrap --store "$DB" --ailang-bin "$AIL" >/dev/null
for m in packages/quickstart/transitions.json packages/se-tools/transitions.json; do
  n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$S/$m")
  (cd "$S" && env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '> ' --answer "publish $n transitions to $DB" \
    --out "$T/o" --err "$T/e" --tty "$T/t" -- "$B/cli/world-publish" transitions --store "$DB" --manifest "$m" --ailang-bin "$AIL") >/dev/null
done
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '[y/N] ' --answer y --out "$T/cred" --err "$T/e" --tty "$T/t" -- \
  "$WORLDD" session mint --store "$DB" --episode bench --grant Workspace.Read=worktree:9007199254740992 >/dev/null
CRED=$(cat "$T/cred")
"$WORLDD" store copy "$DB" "$PG_URI" >/dev/null
PSQL=("$PG_BIN/psql" -X -At -h "$PG_SOCK" -p "$PG_PORT" -U worldsu -d world)
PM=$(head -n 1 "$PG_DIR/data/postmaster.pid")
declare -a PORT DPID
start_d() { # N STORE: daemon N, its port in PORT[N]
  "$WORLDD" serve --store "$2" --ailang-bin "$AIL" --listen 127.0.0.1:0 --workspace-root "$T/ws" --tool-ailang-bin "$AIL" \
    --capacity 8 --session-share 8 --episode-calls -1 --episode-bytes -1 >"$T/out$1" 2>"$T/log$1" &
  DPID[$1]=$!; PIDS+=($!)
  for _ in $(seq 1 300); do grep -q '^worldd listening on' "$T/out$1" && break; sleep 0.1; done
  PORT[$1]=$(sed -n 's/^worldd listening on http:\/\/127.0.0.1://p' "$T/out$1")
  [ -n "${PORT[$1]}" ] || { echo "pg_live_bench: daemon $1 did not start: $(tail -1 "$T/log$1")" >&2; exit 1; }
}
# daemon 0 on SQLite, 1..3 on PostgreSQL
start_d 0 "$DB"; start_d 1 "$PG_URI"; start_d 2 "$PG_URI"; start_d 3 "$PG_URI"
ALL=$(IFS=,; echo "${PIDS[*]}")
echo "daemons on one store, $CLIENTS clients in all, $CALLS calls per row, $ROUNDS rounds ($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo "PostgreSQL: $("${PSQL[@]}" -c "SELECT 'fsync=' || current_setting('fsync') || ' synchronous_commit=' || current_setting('synchronous_commit') || ' wal_sync_method=' || current_setting('wal_sync_method')")"
for d in 0 1 2 3; do # warm-up: capsule pools, caches, connections, the interpreter cache
  "$B/bench/live_bench" calls "${PORT[$d]}" "$CRED" 2 8 tools_decho '{"message":"warm"}' >/dev/null
  "$B/bench/live_bench" calls "${PORT[$d]}" "$CRED" 2 8 ailang-read '{"path":"hello.txt"}' >/dev/null
done
# the CPU ticks of the PostgreSQL server: the postmaster and its children
# (a backend may end between the listing and the read: its line is missing)
server_ticks() {
  local p
  for p in "$PM" $(pgrep -P "$PM"); do cat "/proc/$p/stat" 2>/dev/null || true; done |
    awk '{ sub(/^.*\) /, ""); split($0, f, " "); s += f[12] + f[13] } END { print s + 0 }'
}
HZ=$(getconf CLK_TCK)
# the store's share from the daemons' request lines after line L of each log
share() { # DAEMONS(list) -> "commit_ms_sum ms_sum"
  local d
  for d in $1; do tail -n +"$((LINES[$d] + 1))" "$T/log$d"; done |
    awk '/ request method=POST route=\/mcp\/ status=200 / && /commit_ms=/ { for (i = 1; i <= NF; i++) { if ($i ~ /^ms=/) m += substr($i, 4); if ($i ~ /^commit_ms=/) c += substr($i, 11) } }
         END { printf "%.1f", (m > 0 ? 100 * c / m : 0) }'
}
declare -A ARGS=([tools_decho]='{"message":"hello, world"}' [ailang-read]='{"path":"hello.txt"}')
declare -a LINES
: > "$T/rows"
row() { # LABEL DAEMONS TOOL
  local ports="" d line s0 s1 srv=""
  for d in $2; do ports="$ports${ports:+,}${PORT[$d]}"; LINES[$d]=$(wc -l < "$T/log$d"); done
  s0=$(server_ticks)
  line=$("$B/bench/live_bench" calls "$ports" "$CRED" "$CLIENTS" "$CALLS" "$3" "${ARGS[$3]}" "$ALL")
  s1=$(server_ticks)
  case $1 in pg*) srv=" server_cpu_ms/call=$(awk -v a="$s0" -v b="$s1" -v hz="$HZ" -v n="$CALLS" 'BEGIN { printf "%.2f", (b - a) * 1000 / hz / n }')";; esac
  line="$line store_share_pct=$(share "$2")$srv"
  printf '%-26s %s\n' "$1" "$line"
  echo "$1 $line" >> "$T/rows"
}
LABELS=("sqlite1:0" "pg1:1" "pg2:1 2" "pg3:1 2 3")
for r in $(seq 1 "$ROUNDS"); do
  for tool in tools_decho ailang-read; do
    order=(0 1 2 3); [ $((r % 2)) = 0 ] && order=(3 2 1 0)
    for i in "${order[@]}"; do
      spec=${LABELS[$i]}
      row "${spec%%:*} r$r $tool" "${spec#*:}" "$tool"
    done
  done
done
echo "medians over $ROUNDS rounds (the store's share: commit_ms / request ms in the daemons' logs; server CPU: PostgreSQL's processes):"
med() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) { print "?"; exit } m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print m }'; }
for tool in tools_decho ailang-read; do
  for l in sqlite1 pg1 pg2 pg3; do
    out=""
    for k in calls/s p99_ms cpu_ms/call store_share_pct server_cpu_ms/call; do
      v=$(sed -n "s/^$l r[0-9]* $tool .* ${k//\//\\/}=\([0-9.]*\).*/\1/p" "$T/rows" | med)
      [ "$v" = "?" ] || out="$out $k=$v"
    done
    printf '%-26s%s\n' "$l $tool" "$out"
  done
  for r in $(seq 1 "$ROUNDS"); do
    a=$(sed -n "s/^pg3 r$r $tool .*calls\/s=\([0-9.]*\).*/\1/p" "$T/rows")
    b=$(sed -n "s/^sqlite1 r$r $tool .*calls\/s=\([0-9.]*\).*/\1/p" "$T/rows")
    awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f\n", (b > 0 ? a / b : 0) }'
  done | sort -g | awk -v t="$tool" '{ v[NR] = $1; s = s sprintf("%s%.2f", NR > 1 ? " " : "", $1) }
    END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%-26s median 3 PostgreSQL daemons / 1 SQLite daemon = %.2f (sorted: %s)\n", t, m, s }'
done
for p in "${PIDS[@]}"; do kill -TERM "$p"; wait "$p" || true; done; PIDS=()
"$WORLDD" scan --store "$PG_URI" >/dev/null || echo "pg_live_bench: the PostgreSQL store does not scan clean after the calls" >&2
"$WORLDD" scan --store "$DB" >/dev/null || echo "pg_live_bench: the SQLite store does not scan clean after the calls" >&2
