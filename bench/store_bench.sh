#!/bin/bash
# bench/store_bench.sh: durable commits/s, group commit with concurrent
# writers beside SQLite's own bulk insert, the full scan at each size, the
# start-up scan, and worldd why / replay at the largest size (figures only;
# see bench/store_bench.c). Env: top_builddir (AILANG_LITE and WORLDD
# default to its programs; `make bench` sets them).
#   STORE_BENCH_COMMITS  appends per commit row (4000)
#   STORE_BENCH_SIZES    scan store sizes, entries, comma-separated (10000,100000;
#                        10000,100000,1000000 for the 10^6 row: its store is 4.6 GB
#                        and grows in some 10 minutes here, once with STORE_BENCH_DIR)
#   STORE_BENCH_WRITERS  writer threads of the group commit rows (1,4,16,64,256; at most 4096)
#   STORE_BENCH_ENTRIES  (older name) one scan size
#   STORE_BENCH_PG       0: no PostgreSQL rows; otherwise, with postgresql-15
#                        installed, the group rows run again on a throwaway
#                        cluster (tests/pg_cluster.sh), durable: fsync=on and
#                        synchronous_commit=on (printed)
#   STORE_BENCH_DIR      keep the stores there: the store of the largest size is
#                        kept as scan-N.db (with scan-N.db.artifacts) and a later
#                        run with the same largest size scans it instead of growing
#                        one (plus the entries each run adds on top); the smaller
#                        sizes are grown each run (scan.db). Delete the directory
#                        when done: 10^6 entries are 4.6 GB.
set -e
b=${top_builddir:-.}
AILANG_LITE=${AILANG_LITE:-$b/interp/ailang-lite}; export AILANG_LITE
WORLDD=${WORLDD:-$b/cli/worldd}; export WORLDD
sizes=${STORE_BENCH_SIZES:-${STORE_BENCH_ENTRIES:-10000,100000}}
if [ -n "${STORE_BENCH_DIR:-}" ]; then
	dir=$STORE_BENCH_DIR
	mkdir -p "$dir"
	# the commit, group and growing scan stores start empty each run; scan-N.db is kept
	rm -rf "$dir"/durable.db* "$dir"/nosync.db* "$dir"/group*.db* "$dir"/bulk.db* "$dir"/scan.db*
else
	dir=$(mktemp -d "${TMPDIR:-/tmp}/world-store-bench.XXXXXX")
	trap 'rm -rf "$dir"' EXIT
fi
echo "store benchmark in $dir ($(df -hP "$dir" | awk 'NR==2 {print $1}'))"
# PostgreSQL beside SQLite: a throwaway cluster (stopped and removed on exit)
if [ "${STORE_BENCH_PG:-1}" != 0 ] && [ -n "${top_srcdir:-}" ]; then
	. "$top_srcdir/tests/pg_cluster.sh"
	if pg_cluster_find; then
		# durable commits: the tests' clusters run with fsync=off, this one not
		if PG_CLUSTER_DURABLE=1 pg_cluster_start; then
			STORE_BENCH_PG_URI=$PG_URI; export STORE_BENCH_PG_URI
			# the postmaster: the rows add up the CPU of its processes
			STORE_BENCH_PG_PID=$(head -n 1 "$PG_DIR/data/postmaster.pid"); export STORE_BENCH_PG_PID
			echo "PostgreSQL: $("$PG_BIN/psql" -X -At -h "$PG_SOCK" -p "$PG_PORT" -U worldsu -d world \
				-c "SELECT 'fsync=' || current_setting('fsync') || ' synchronous_commit=' || current_setting('synchronous_commit') || ' wal_sync_method=' || current_setting('wal_sync_method')" 2>&1)"
			# the cluster's trap replaced ours: remove the stores too
			[ -n "${STORE_BENCH_DIR:-}" ] || trap 'pg_cluster_cleanup; rm -rf "$dir"' EXIT
		else
			STORE_BENCH_PG_SKIP="the throwaway cluster did not start"; export STORE_BENCH_PG_SKIP
		fi
	else
		STORE_BENCH_PG_SKIP="postgresql-15 is not installed"; export STORE_BENCH_PG_SKIP
	fi
fi
"$b/bench/store_bench" "$dir" "${STORE_BENCH_COMMITS:-4000}" "$sizes" "${STORE_BENCH_WRITERS:-1,4,16,64,256}" "$WORLDD"
