#!/bin/sh
# bench/store_bench.sh: durable commits/s and integrity-scan throughput of
# the store (figures only; see bench/store_bench.c). Env: top_builddir.
# STORE_BENCH_COMMITS / STORE_BENCH_ENTRIES override 10000 / 100000.
set -e
dir=$(mktemp -d "${TMPDIR:-/tmp}/world-store-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
echo "store benchmark in $dir ($(df -hP "$dir" | awk 'NR==2 {print $1}'))"
"$top_builddir/bench/store_bench" "$dir" "${STORE_BENCH_COMMITS:-10000}" "${STORE_BENCH_ENTRIES:-100000}"
