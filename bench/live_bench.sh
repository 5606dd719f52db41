#!/bin/bash
# bench/live_bench.sh: several daemons and writers on one store (issue 20,
# item 7), side by side in one run. (1) MCP tools/call of tools_decho (pure)
# and ailang-read (Workspace.Read, effectful): calls/s, p50 and p99 with one
# `worldd serve` and with three on the same store, at the same total client
# count (the clients spread over the daemons). Three daemons are started
# once and kept running; the rows alternate, round after round, between
# daemon 1 alone and all three (1,3 in odd rounds, 3,1 in even ones, so a
# drift of the machine's load within a round favours neither), and each
# round prints its 3/1 ratio; the end prints the median ratio per tool. On
# a shared 2-core machine one row against one row varies by a third: only
# the medians of alternating rounds say anything. Each row also prints the
# CPU the three daemons and all their descendants (capsule spawners,
# capsules, tool interpreters) spent during it per call (cpu_ms/call:
# utime+stime+cutime+cstime from /proc/PID/stat, bench/live_bench.c
# tree_ticks; the two idle daemons of a 1-daemon row are counted too) and
# how busy the host's CPUs were (host_busy, everything on the machine).
# (2) call-like commits/s (an output, an input, an invocation record and a
# log entry per transaction, synchronous=FULL, the chain moved by
# compare-and-swap) with 1, 2 and 4 writer processes on one store. Figures
# only, never judged.
# Env: top_builddir, top_srcdir, AILANG_LITE; LIVE_BENCH_CALLS (400 per
# row), LIVE_BENCH_CLIENTS (6), LIVE_BENCH_ROUNDS (5), LIVE_BENCH_COMMITS
# (200 per writer), LIVE_BENCH_WRITERS (1,2,4).
set -e
B=$top_builddir; S=$top_srcdir
WORLDD=$B/cli/worldd; AIL=$B/interp/ailang-lite; PTY=$S/tests/publish/pty.py
CALLS=${LIVE_BENCH_CALLS:-400}; CLIENTS=${LIVE_BENCH_CLIENTS:-6}; ROUNDS=${LIVE_BENCH_ROUNDS:-5}
T=$(mktemp -d /tmp/world-lbench.XXXXXX); PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; rm -rf "$T"' EXIT
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
declare -a PORT
start_d() { # N: a daemon on the store, its port in PORT[N]
  "$WORLDD" serve --store "$DB" --ailang-bin "$AIL" --listen 127.0.0.1:0 --workspace-root "$T/ws" --tool-ailang-bin "$AIL" \
    --capacity 8 --session-share 8 --episode-calls -1 --episode-bytes -1 >"$T/out$1" 2>"$T/log$1" &
  PIDS+=($!)
  for _ in $(seq 1 300); do grep -q '^worldd listening on' "$T/out$1" && break; sleep 0.1; done
  PORT[$1]=$(sed -n 's/^worldd listening on http:\/\/127.0.0.1://p' "$T/out$1")
  [ -n "${PORT[$1]}" ] || { echo "live_bench: daemon $1 did not start: $(tail -1 "$T/log$1")" >&2; exit 1; }
}
ALL= # every daemon's pid, for cpu_ms/call
row() { # LABEL PORTS TOOL ARGS: one row, its figures also kept in $T/rows
  local line
  line=$("$B/bench/live_bench" calls "$2" "$CRED" "$CLIENTS" "$CALLS" "$3" "$4" "$ALL")
  printf '%-30s %s\n' "$1" "$line"
  echo "$1 $line" >> "$T/rows"
}
echo "calls on one store, $CLIENTS clients in all, $CALLS calls per row, $ROUNDS rounds ($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)):"
start_d 1; start_d 2; start_d 3
ALL=$(IFS=,; echo "${PIDS[*]}")
for d in 1 2 3; do # warm-up: each daemon's capsule pool, caches and connections
  "$B/bench/live_bench" calls "${PORT[$d]}" "$CRED" 2 8 tools_decho '{"message":"warm"}' >/dev/null
  "$B/bench/live_bench" calls "${PORT[$d]}" "$CRED" 2 8 ailang-read '{"path":"hello.txt"}' >/dev/null
done
ONE=${PORT[1]}; THREE=${PORT[1]},${PORT[2]},${PORT[3]}
declare -A ARGS=([tools_decho]='{"message":"hello, world"}' [ailang-read]='{"path":"hello.txt"}')
rate() { sed -n "s/^r$1 $2 $3 .*calls\/s=\([0-9.]*\).*/\1/p" "$T/rows"; }
: > "$T/rows"
for r in $(seq 1 "$ROUNDS"); do
  for tool in tools_decho ailang-read; do
    if [ $((r % 2)) = 1 ]; then order="1 3"; else order="3 1"; fi
    for n in $order; do
      if [ "$n" = 1 ]; then ports=$ONE; else ports=$THREE; fi
      row "r$r $n $tool" "$ports" "$tool" "${ARGS[$tool]}"
    done
    printf '%-30s 3/1=%s\n' "r$r   $tool" "$(awk -v a="$(rate "$r" 3 "$tool")" -v b="$(rate "$r" 1 "$tool")" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
  done
done
echo "medians over $ROUNDS rounds:"
for tool in tools_decho ailang-read; do
  for n in 1 3; do
    for k in calls/s p99_ms cpu_ms/call; do
      sed -n "s/^r[0-9]* $n $tool .* ${k//\//\\/}=\([0-9.]*\).*/\1/p" "$T/rows" | sort -g |
        awk -v k="$k" '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%s=%s ", k, NR ? m : "?" }'
    done | sed "s/^/$(printf '%-30s ' "$n daemon(s) $tool")/"; echo
  done
  for r in $(seq 1 "$ROUNDS"); do
    awk -v a="$(rate "$r" 3 "$tool")" -v b="$(rate "$r" 1 "$tool")" 'BEGIN { printf "%.4f\n", (b > 0 ? a / b : 0) }'
  done | sort -g | awk -v t="$tool" '{ v[NR] = $1; s = s sprintf("%s%.2f", NR > 1 ? " " : "", $1) }
    END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%-30s median 3/1=%.2f (sorted: %s)\n", t, m, s }'
done
for p in "${PIDS[@]}"; do kill -TERM "$p"; wait "$p" || true; done; PIDS=()
"$WORLDD" scan --store "$DB" >/dev/null || echo "live_bench: the store does not scan clean after the calls" >&2
echo
echo "call-like commits on one store, ${LIVE_BENCH_COMMITS:-200} per writer process:"
IFS=, read -r -a WS <<< "${LIVE_BENCH_WRITERS:-1,2,4}"
for w in "${WS[@]}"; do
  rm -rf "$T/c" && mkdir -p "$T/c"
  printf '%-28s ' "$w writer process(es)"
  AILANG_LITE=$AIL "$B/bench/live_bench" commits "$T/c/world.db" "$w" "${LIVE_BENCH_COMMITS:-200}"
done
