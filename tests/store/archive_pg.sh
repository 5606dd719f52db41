#!/bin/bash
# tests/store/archive_pg.sh: the interpreter archive on a throwaway
# PostgreSQL cluster (tests/pg_cluster.sh, as tests/store/pgstore.sh),
# through tests/store/test_archive_pg: the archive table, the per-host
# cache materialised and re-hashed, a flipped byte, a missing row, two
# processes materialising at once. Without postgresql-15 the SQLite half
# runs and the PostgreSQL half is skipped.
. "$top_srcdir/tests/pg_cluster.sh"
pg_cluster_run_test "$top_builddir/tests/store/test_archive_pg" 180
