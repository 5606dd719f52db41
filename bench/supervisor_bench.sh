#!/bin/sh
# bench/supervisor_bench.sh: runs/s of the echo transition through the
# supervisor in capsules (1, 2, 8, 16 in flight) beside unconfined fork+exec of
# ailang-lite (figures only; see bench/supervisor_bench.c). Env:
# top_builddir; SUP_BENCH_RUNS overrides 500 runs per row.
set -e
"$top_builddir/bench/supervisor_bench" "$top_builddir/interp/ailang-lite" "${SUP_BENCH_RUNS:-500}"
