#!/bin/sh
# bench/exec_bench.sh: an exec call of `true` in the exec capsule beside
# bwrap with comparable binds and a plain fork+exec (bench/exec_bench.c).
# EXEC_BENCH_N (50) calls per arm.
b=${top_builddir:-.}
BWRAP=${BWRAP:-$(command -v bwrap || true)} "$b/bench/exec_bench" "${EXEC_BENCH_N:-50}"
