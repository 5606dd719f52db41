#!/bin/bash
# bench/pg_rtt_bench.sh: what a call costs when its database is across a
# network (issue 44, item 1). A throwaway PostgreSQL cluster (durable
# commits: PG_CLUSTER_DURABLE=1) behind loopback delay proxies
# (bench/pg_rtt_bench proxy: every byte held DELAY ms each way), one
# `worldd serve` per delay on the proxy's port, and one daemon on the same
# store in SQLite for comparison. Each row sends CALLS MCP tools/call one
# after another (one client, bench/live_bench) of tools_decho (pure),
# ailang-read and ailang-write (effectful, Workspace.Read and .Write) and
# prints p50 and p99; for a delay d > 0 also the round trips to the
# database a call makes, derived from the times: (p50(d) - p50(0)) / (2 d).
# The driver counts them exactly (tests/daemon/pg_rtt.sh); this is the
# same figure seen from the client. Last, the throughput of three
# PostgreSQL daemons (direct, no proxy) beside one SQLite daemon for the
# pure call, 6 clients: reported, not judged (on one machine the server
# shares the cores). Figures only, never judged.
# Env: top_builddir, top_srcdir; PG_RTT_BENCH_CALLS (200 per row),
# PG_RTT_BENCH_DELAYS ("0 0.5 2", ms each way; the first must be 0).
set -e
B=$top_builddir; S=$top_srcdir
WORLDD=$B/cli/worldd; AIL=$B/interp/ailang-lite; PTY=$S/tests/publish/pty.py
CALLS=${PG_RTT_BENCH_CALLS:-200}; DELAYS=(${PG_RTT_BENCH_DELAYS:-0 0.5 2})
. "$S/tests/pg_cluster.sh"
if ! pg_cluster_find || ! grep -q -- '-DWORLD_HAVE_PG=1' "$B/Makefile"; then
  echo "pg_rtt_bench: skipped (postgresql-15 not installed, or built without PostgreSQL)"
  exit 0
fi
[ "${DELAYS[0]}" = 0 ] || { echo "pg_rtt_bench: PG_RTT_BENCH_DELAYS must start with 0" >&2; exit 2; }
T=$(mktemp -d /tmp/world-pgrtt.XXXXXX); PIDS=()
chmod 755 "$T"
cleanup() { for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; pg_cluster_cleanup; rm -rf "$T"; }
trap cleanup EXIT
PG_CLUSTER_DURABLE=1 pg_cluster_start || { echo "pg_rtt_bench: the throwaway cluster did not start" >&2; exit 1; }
trap cleanup EXIT
XDG_CACHE_HOME=$T/cache; export XDG_CACHE_HOME
DB=$T/world.db
"$WORLDD" epoch bootstrap --store "$DB" --ailang-bin "$AIL" >/dev/null
for m in packages/quickstart/transitions.json packages/se-tools/transitions.json; do
  n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$S/$m")
  (cd "$S" && env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '> ' --answer "publish $n transitions to $DB" \
    --out "$T/o" --err "$T/e" --tty "$T/t" -- "$B/cli/world-publish" transitions --store "$DB" --manifest "$m" --ailang-bin "$AIL") >/dev/null
done
# one episode (and worktree) per daemon: an episode's effects have one home
ND=$(( ${#DELAYS[@]} + 1 ))
declare -a CRED
for d in $(seq 0 $((ND - 1))); do
  mkdir -p "$T/ws/ep$d"; printf 'hello, world\n' > "$T/ws/ep$d/hello.txt"
  env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '[y/N] ' --answer y --out "$T/cred$d" --err "$T/e" --tty "$T/t" -- \
    "$WORLDD" session mint --store "$DB" --episode "ep$d" --grant Workspace.Read=worktree:9007199254740992 \
    --grant Workspace.Write=worktree:9007199254740992 >/dev/null
  CRED[$d]=$(cat "$T/cred$d")
done
chmod 700 "$T/ws" "$T"/ws/ep*
# a role with a password: the proxies carry TCP, where the cluster asks for one
PW=rtt-bench-Pw-1
PSQL=("$PG_BIN/psql" -X -q -At -h "$PG_SOCK" -p "$PG_PORT" -U worldsu)
"${PSQL[@]}" -d world -c "CREATE ROLE wb LOGIN PASSWORD '$PW'" >/dev/null
"${PSQL[@]}" -d world -c "CREATE DATABASE rtt OWNER wb" >/dev/null
"${PSQL[@]}" -d rtt -c "ALTER SCHEMA public OWNER TO wb" >/dev/null
printf '%s\n' "$PW" > "$T/pw"; chmod 600 "$T/pw"
"$WORLDD" store copy --dest-password-file "$T/pw" "$DB" "postgresql://wb@127.0.0.1:$PG_PORT/rtt" >/dev/null

declare -a PORT
start_d() { # N STORE [serve flags]: daemon N, its port in PORT[N]
  local n=$1 store=$2; shift 2
  "$WORLDD" serve --store "$store" --ailang-bin "$AIL" --listen 127.0.0.1:0 --workspace-root "$T/ws" --tool-ailang-bin "$AIL" \
    --capacity 8 --session-share 8 --episode-calls -1 --episode-bytes -1 "$@" >"$T/out$n" 2>"$T/log$n" &
  PIDS+=($!)
  for _ in $(seq 1 300); do grep -q '^worldd listening on' "$T/out$n" && break; sleep 0.1; done
  PORT[$n]=$(sed -n 's/^worldd listening on http:\/\/127.0.0.1://p' "$T/out$n")
  [ -n "${PORT[$n]}" ] || { echo "pg_rtt_bench: daemon $n did not start: $(tail -1 "$T/log$n")" >&2; exit 1; }
}
# daemon 0 on SQLite; daemon i (1..) on PostgreSQL through the proxy of DELAYS[i-1]
start_d 0 "$DB"
for i in "${!DELAYS[@]}"; do
  "$B/bench/pg_rtt_bench" proxy "$T/proxy$i" "$PG_PORT" "${DELAYS[$i]}" 2>"$T/proxy$i.err" &
  PIDS+=($!)
  for _ in $(seq 1 100); do [ -s "$T/proxy$i" ] && break; sleep 0.05; done
  [ -s "$T/proxy$i" ] || { echo "pg_rtt_bench: proxy $i did not start: $(cat "$T/proxy$i.err")" >&2; exit 1; }
  start_d $((i + 1)) "postgresql://wb@127.0.0.1:$(cat "$T/proxy$i")/rtt" --store-password-file "$T/pw"
done
TOOLS=(tools_decho ailang-read ailang-write)
declare -A ARGS=([tools_decho]='{"message":"hello, world"}' [ailang-read]='{"path":"hello.txt"}'
                 [ailang-write]='{"path":"out.txt","content":"hello again"}')
for d in $(seq 0 $((ND - 1))); do # warm-up: capsule pools, caches, the connection's statements
  for tool in "${TOOLS[@]}"; do
    "$B/bench/live_bench" calls "${PORT[$d]}" "${CRED[$d]}" 1 8 "$tool" "${ARGS[$tool]}" >/dev/null
  done
done
echo "one call at a time, $CALLS calls per row ($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo "PostgreSQL: $("${PSQL[@]}" -d world -c "SELECT 'fsync=' || current_setting('fsync') || ' synchronous_commit=' || current_setting('synchronous_commit')")," \
  "reached through a loopback proxy holding every byte the delay each way"
printf '%-13s %-11s %9s %8s %8s %12s %9s\n' call backend delay_ms p50_ms p99_ms round_trips failures
for tool in "${TOOLS[@]}"; do
  p0=
  for d in $(seq 0 $((ND - 1))); do
    line=$("$B/bench/live_bench" calls "${PORT[$d]}" "${CRED[$d]}" 1 "$CALLS" "$tool" "${ARGS[$tool]}")
    p50=$(sed -n 's/.* p50_ms=\([0-9.]*\).*/\1/p' <<<"$line"); p99=$(sed -n 's/.* p99_ms=\([0-9.]*\).*/\1/p' <<<"$line")
    f=$(sed -n 's/.* failures=\([0-9]*\).*/\1/p' <<<"$line")
    if [ "$d" = 0 ]; then
      printf '%-13s %-11s %9s %8s %8s %12s %9s\n' "$tool" sqlite - "$p50" "$p99" - "$f"
      continue
    fi
    dl=${DELAYS[$((d - 1))]}
    [ "$d" = 1 ] && p0=$p50
    rt=$(awk -v a="$p50" -v b="$p0" -v dl="$dl" 'BEGIN { if (dl > 0) printf "%.1f", (a - b) / (2 * dl); else print "-" }')
    printf '%-13s %-11s %9s %8s %8s %12s %9s\n' "$tool" postgresql "$dl" "$p50" "$p99" "$rt" "$f"
  done
done
# three PostgreSQL daemons (direct) beside one SQLite daemon, the pure call
for p in "${PIDS[@]:1}"; do kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null || true; done
PIDS=("${PIDS[0]}")
U="postgresql://wb@127.0.0.1:$PG_PORT/rtt"
start_d 11 "$U" --store-password-file "$T/pw"; start_d 12 "$U" --store-password-file "$T/pw"; start_d 13 "$U" --store-password-file "$T/pw"
for d in 11 12 13; do "$B/bench/live_bench" calls "${PORT[$d]}" "${CRED[0]}" 1 8 tools_decho "${ARGS[tools_decho]}" >/dev/null; done
s=$("$B/bench/live_bench" calls "${PORT[0]}" "${CRED[0]}" 6 "$((CALLS * 3))" tools_decho "${ARGS[tools_decho]}")
p=$("$B/bench/live_bench" calls "${PORT[11]},${PORT[12]},${PORT[13]}" "${CRED[0]}" 6 "$((CALLS * 3))" tools_decho "${ARGS[tools_decho]}")
echo "1 SQLite daemon, 6 clients, tools_decho:       $s"
echo "3 PostgreSQL daemons, 6 clients, tools_decho:  $p"
awk -v a="$(sed -n 's/.*calls\/s=\([0-9.]*\).*/\1/p' <<<"$p")" -v b="$(sed -n 's/.*calls\/s=\([0-9.]*\).*/\1/p' <<<"$s")" \
  'BEGIN { printf "3 PostgreSQL daemons / 1 SQLite daemon (calls/s, reported, not judged) = %.2f\n", (b > 0 ? a / b : 0) }'
for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null || true; done; PIDS=()
