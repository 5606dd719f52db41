#!/bin/bash
# tests/store/pgstore.sh: the store itself on a throwaway PostgreSQL
# cluster (tests/pg_cluster.sh, as tests/store/pg.sh), through
# tests/store/test_pgstore: the same history on SQLite and PostgreSQL,
# every ref and entry hash compared. Without postgresql-15 the SQLite half
# runs and the PostgreSQL half is skipped.
. "$top_srcdir/tests/pg_cluster.sh"
pg_cluster_run_test "$top_builddir/tests/store/test_pgstore" 120
