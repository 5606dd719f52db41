#!/bin/sh
# bench/pin_bench.sh: the ways of pinning ailang-lite (see bench/pin_bench.c).
# N=${PIN_BENCH_N:-40} fresh processes per way.
b=${top_builddir:-.}
"$b/bench/pin_bench" "$b/interp/ailang-lite" "${PIN_BENCH_N:-40}"
