#!/bin/bash
# tests/store/pg.sh: the store's SQL driver (store/db.h) on SQLite and on a
# throwaway PostgreSQL cluster (tests/pg_cluster.sh: initdb + pg_ctl of
# Debian's postgresql-15 in a temp dir, as an unprivileged user, stopped
# and removed at the end whatever happens), through tests/store/test_db.
# Without postgresql-15 the C test runs its SQLite half and skips the rest.
. "$top_srcdir/tests/pg_cluster.sh"
test_db="$top_builddir/tests/store/test_db"
[ -x "$test_db" ] || { echo "Bail out! $test_db not built"; exit 1; }
if ! pg_cluster_find; then
  WORLD_TEST_PG_SKIP="postgresql-15 is not installed (no initdb/pg_ctl in /usr/lib/postgresql/15/bin or \$PG_BINDIR)" \
    timeout 60 "$test_db"
  exit $?
fi
if ! pg_cluster_start; then
  echo "Bail out! could not start a throwaway PostgreSQL cluster (see the line above)"
  exit 1
fi
WORLD_TEST_PG_URI=$PG_URI WORLD_TEST_PG_TCP=$PG_TCP WORLD_TEST_PG_STOP=$PG_STOP WORLD_TEST_PG_START=$PG_START \
  timeout 120 "$test_db"
rc=$?
pg_cluster_cleanup
# the cluster is gone: no postmaster of ours, no directory
exit $rc
