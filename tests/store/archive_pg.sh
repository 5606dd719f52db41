#!/bin/bash
# tests/store/archive_pg.sh: the interpreter archive on a throwaway
# PostgreSQL cluster (tests/pg_cluster.sh, as tests/store/pgstore.sh),
# through tests/store/test_archive_pg: the archive table, the per-host
# cache materialised and re-hashed, a flipped byte, a missing row, two
# processes materialising at once. Without postgresql-15 the SQLite half
# runs and the PostgreSQL half is skipped.
. "$top_srcdir/tests/pg_cluster.sh"
t="$top_builddir/tests/store/test_archive_pg"
[ -x "$t" ] || { echo "Bail out! $t not built"; exit 1; }
if ! pg_cluster_find; then
  WORLD_TEST_PG_SKIP="postgresql-15 is not installed (no initdb/pg_ctl in /usr/lib/postgresql/15/bin or \$PG_BINDIR)" \
    timeout 60 "$t"
  exit $?
fi
if ! pg_cluster_start; then
  echo "Bail out! could not start a throwaway PostgreSQL cluster (see the line above)"
  exit 1
fi
WORLD_TEST_PG_URI=$PG_URI timeout 180 "$t"
rc=$?
pg_cluster_cleanup
exit $rc
