#!/bin/bash
# bench/tree_bench.sh: what the log's Merkle tree and a signed checkpoint
# per batch cost the durable append rate (issue 43; bench/tree_bench.c),
# and one checkpoint's and one proof's cost at the bench's size. Figures
# only. Env: top_builddir (AILANG_LITE defaults to its interpreter).
#   TREE_BENCH_N        appends per run (4096)
#   TREE_BENCH_WRITERS  writer threads, comma-separated (1,64,256)
#   TREE_BENCH_ROUNDS   alternating rounds of each arm, the median printed (3)
set -e
b=${top_builddir:-.}
AILANG_LITE=${AILANG_LITE:-$b/interp/ailang-lite}; export AILANG_LITE
dir=$(mktemp -d "${TMPDIR:-/tmp}/tree_bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$b/bench/tree_bench" "$dir" "${TREE_BENCH_N:-4096}" "${TREE_BENCH_WRITERS:-1,64,256}" "${TREE_BENCH_ROUNDS:-3}"
