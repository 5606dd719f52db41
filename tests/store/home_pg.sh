#!/bin/bash
# tests/store/home_pg.sh: an episode's home in the store (store/home.h)
# through tests/store/test_home, on SQLite and on a throwaway PostgreSQL
# cluster (tests/pg_cluster.sh). Without postgresql-15 the SQLite half
# runs and the PostgreSQL half is skipped.
. "$top_srcdir/tests/pg_cluster.sh"
pg_cluster_run_test "$top_builddir/tests/store/test_home" 120
