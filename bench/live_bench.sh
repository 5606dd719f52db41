#!/bin/bash
# bench/live_bench.sh: several daemons and writers on one store (issue 20,
# item 7), side by side in one run. (1) MCP tools/call of tools_decho (pure)
# and ailang-read (Workspace.Read, effectful): calls/s, p50 and p99 with one
# `worldd serve` and with three on the same store, at the same total client
# count (the clients spread over the daemons). (2) call-like commits/s (an
# output, an input, an invocation record and a log entry per transaction,
# synchronous=FULL, the chain moved by compare-and-swap) with 1, 2 and 4
# writer processes on one store. Figures only, never judged.
# Env: top_builddir, top_srcdir, AILANG_LITE; LIVE_BENCH_CALLS (600 per
# row), LIVE_BENCH_CLIENTS (6), LIVE_BENCH_COMMITS (200 per writer),
# LIVE_BENCH_WRITERS (1,2,4).
set -e
B=$top_builddir; S=$top_srcdir
WORLDD=$B/cli/worldd; AIL=$B/interp/ailang-lite; PTY=$S/tests/publish/pty.py
CALLS=${LIVE_BENCH_CALLS:-600}; CLIENTS=${LIVE_BENCH_CLIENTS:-6}
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
row() { # LABEL PORTS TOOL ARGS
  printf '%-28s ' "$1"
  "$B/bench/live_bench" calls "$2" "$CRED" "$CLIENTS" "$CALLS" "$3" "$4"
}
echo "calls on one store, $CLIENTS clients in all, $CALLS calls per row ($(nproc) cores):"
start_d 1
"$B/bench/live_bench" calls "${PORT[1]}" "$CRED" 2 8 tools_decho '{"message":"warm"}' >/dev/null # warm-up
row "1 daemon  tools_decho" "${PORT[1]}" tools_decho '{"message":"hello, world"}'
row "1 daemon  ailang-read" "${PORT[1]}" ailang-read '{"path":"hello.txt"}'
start_d 2; start_d 3
"$B/bench/live_bench" calls "${PORT[2]},${PORT[3]}" "$CRED" 2 8 tools_decho '{"message":"warm"}' >/dev/null
row "3 daemons tools_decho" "${PORT[1]},${PORT[2]},${PORT[3]}" tools_decho '{"message":"hello, world"}'
row "3 daemons ailang-read" "${PORT[1]},${PORT[2]},${PORT[3]}" ailang-read '{"path":"hello.txt"}'
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
