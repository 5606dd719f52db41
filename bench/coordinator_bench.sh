#!/bin/sh
# bench/coordinator_bench.sh: durable invocations through the coordinator
# beside the bare supervisor+capsule (figures only; bench/coordinator_bench.c).
# Env: top_builddir; COORD_BENCH_RUNS overrides 300 runs per row.
set -e
"$top_builddir/bench/coordinator_bench" "$top_builddir/interp/ailang-lite" "${COORD_BENCH_RUNS:-300}"
