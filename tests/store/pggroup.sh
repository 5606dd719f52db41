#!/bin/bash
# tests/store/pggroup.sh: group commit on a throwaway PostgreSQL
# cluster (tests/pg_cluster.sh, as tests/store/pg.sh), through
# tests/store/test_pggroup: a batch that lost a race run again whole (held
# at a pause point, with its control), and two groups under load, one
# chain. Without postgresql-15 its assertions are skipped with the reason.
. "$top_srcdir/tests/pg_cluster.sh"
pg_cluster_run_test "$top_builddir/tests/store/test_pggroup" 120
