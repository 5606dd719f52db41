#!/bin/bash
# bench/scan_bench.sh: the daemon's start-up scan (world_scan_start, what
# worldd serve calls) beside the full streaming scan, on issue 39's store
# and on one store grown through the sizes with large shared sources and
# 64 KiB writes (figures only; see bench/scan_bench.c). Env: top_builddir
# (AILANG_LITE defaults to its interpreter; `make bench` sets it).
#   SCAN_BENCH_SIZES          entries, comma-separated, ascending (10000,100000,1000000)
#   SCAN_BENCH_SOURCES        sources of 40 KB a publish (300)
#   SCAN_BENCH_WRITE_EVERY    one call in N writes 64 KiB (64)
#   SCAN_BENCH_PUBLISH_EVERY  a publish every N entries (100000)
#   SCAN_BENCH_BEFORE         0: no "before" rows (test builds print them: the
#                             start-up scan with its verdicts forgotten every entry)
#   SCAN_BENCH_DIR            keep the stores there: a later run grows scan.db on
#                             from its last entry instead of from nothing (10^6
#                             entries are some 7 GB); delete it when done
set -e
b=${top_builddir:-.}
AILANG_LITE=${AILANG_LITE:-$b/interp/ailang-lite}; export AILANG_LITE
sizes=${SCAN_BENCH_SIZES:-10000,100000,1000000}
if [ -n "${SCAN_BENCH_DIR:-}" ]; then
	dir=$SCAN_BENCH_DIR
	mkdir -p "$dir"
else
	dir=$(mktemp -d "${TMPDIR:-/tmp}/world-scan-bench.XXXXXX")
	trap 'rm -rf "$dir"' EXIT
fi
echo "scan benchmark in $dir ($(df -hP "$dir" | awk 'NR==2 {print $1}')), load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$b/bench/scan_bench" "$dir" "$sizes"
echo "load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
