#!/bin/bash
# bench/home_bench.sh: what an episode's home costs an effectful call
# (bench/home_bench.c), on a durable SQLite store and, with postgresql-15
# installed, a durable throwaway cluster (fsync=on, synchronous_commit=on).
# Figures only.
#   HOME_BENCH_N  steady-state calls (5000)
set -e
b=${top_builddir:-.}
dir=$(mktemp -d "${TMPDIR:-/tmp}/world-home-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
N=${HOME_BENCH_N:-5000}
"$b/bench/home_bench" "$dir/h.db" "$N"
if [ -n "${top_srcdir:-}" ]; then
	PG_CLUSTER_DURABLE=1 # fsync=on, synchronous_commit=on: the claims are durable commits
	. "$top_srcdir/tests/pg_cluster.sh"
	chmod 755 "$dir"
	if pg_cluster_find && grep -q -- '-DWORLD_HAVE_PG=1' "$b/Makefile" && pg_cluster_start; then
		trap 'pg_cluster_cleanup; rm -rf "$dir"' EXIT
		"$b/bench/home_bench" "$PG_URI" "$N"
	else
		echo "episode homes on PostgreSQL: not run (no postgresql-15, or built without it)"
	fi
fi
