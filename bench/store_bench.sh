#!/bin/sh
# bench/store_bench.sh: durable commits/s, group commit with concurrent
# writers beside SQLite's own bulk insert, the full scan at each size, the
# start-up scan, and worldd why / replay at the largest size (figures only;
# see bench/store_bench.c). Env: top_builddir (AILANG_LITE and WORLDD
# default to its programs; `make bench` sets them).
#   STORE_BENCH_COMMITS  appends per commit row (4000)
#   STORE_BENCH_SIZES    scan store sizes, entries, comma-separated (10000,100000;
#                        10000,100000,1000000 for the 10^6 row: about 15 minutes
#                        and 5 GB here)
#   STORE_BENCH_WRITERS  writer threads of the group commit rows (1,4,16,64)
#   STORE_BENCH_ENTRIES  (older name) one scan size
#   STORE_BENCH_DIR      keep the stores there and reuse its scan store
#                        (grown further when a size asks for more; a
#                        store already larger than a size skips that row)
set -e
b=${top_builddir:-.}
AILANG_LITE=${AILANG_LITE:-$b/interp/ailang-lite}; export AILANG_LITE
WORLDD=${WORLDD:-$b/cli/worldd}; export WORLDD
sizes=${STORE_BENCH_SIZES:-${STORE_BENCH_ENTRIES:-10000,100000}}
if [ -n "${STORE_BENCH_DIR:-}" ]; then
	dir=$STORE_BENCH_DIR
	mkdir -p "$dir"
	# the commit and group stores start empty each run; scan.db is kept
	rm -rf "$dir"/durable.db* "$dir"/nosync.db* "$dir"/group*.db* "$dir"/bulk.db*
else
	dir=$(mktemp -d "${TMPDIR:-/tmp}/world-store-bench.XXXXXX")
	trap 'rm -rf "$dir"' EXIT
fi
echo "store benchmark in $dir ($(df -hP "$dir" | awk 'NR==2 {print $1}'))"
"$b/bench/store_bench" "$dir" "${STORE_BENCH_COMMITS:-4000}" "$sizes" "${STORE_BENCH_WRITERS:-1,4,16,64}" "$WORLDD"
