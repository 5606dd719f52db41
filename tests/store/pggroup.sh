#!/bin/bash
# tests/store/pggroup.sh: group commit on a throwaway PostgreSQL
# cluster (tests/pg_cluster.sh, as tests/store/pg.sh), through
# tests/store/test_pggroup: a batch that lost a race run again whole (held
# at a pause point, with its control), and two groups under load, one
# chain. Without postgresql-15 its assertions are skipped with the reason.
. "$top_srcdir/tests/pg_cluster.sh"
t="$top_builddir/tests/store/test_pggroup"
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
WORLD_TEST_PG_URI=$PG_URI timeout 120 "$t"
rc=$?
pg_cluster_cleanup
exit $rc
