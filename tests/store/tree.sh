#!/bin/bash
# tests/store/tree.sh: the log's Merkle tree in the store (store/tree.h),
# tests/store/test_tree on SQLite and on a throwaway PostgreSQL cluster
# (tests/pg_cluster.sh; without postgresql-15 the PostgreSQL half is skipped).
. "$top_srcdir/tests/pg_cluster.sh"
pg_cluster_run_test "$top_builddir/tests/store/test_tree" 300
