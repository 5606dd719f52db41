#!/bin/sh
# bench/tlog_bench.sh: the transparency log's library (bench/tlog_bench.c):
# appends, proofs made and checked at TLOG_BENCH_LEAVES (1000000) leaves,
# TLOG_BENCH_PROOFS (10000) of each, and TLOG_BENCH_SIGNS (5000) checkpoints
# signed and verified.
b=${top_builddir:-.}
"$b/bench/tlog_bench" "${TLOG_BENCH_LEAVES:-1000000}" "${TLOG_BENCH_PROOFS:-10000}" "${TLOG_BENCH_SIGNS:-5000}"
