#!/bin/sh
# bench/run_bench.sh: whole-process worldd run vs bwrap vs unconfined, back
# to back and with 250 ms idle before each run, then where the time goes
# (see bench/run_bench.c). RUN_BENCH_N (60) and RUN_BENCH_IDLE_N (20) runs per row.
b=${top_builddir:-.}
"$b/bench/run_bench" "$b/cli/worldd" "$b/interp/ailang-lite" "$b/bench/capsule_noop" "$(command -v bwrap || true)" \
  "${RUN_BENCH_N:-60}" "${RUN_BENCH_IDLE_N:-20}"
