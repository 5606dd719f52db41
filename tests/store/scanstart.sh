#!/bin/bash
# tests/store/scanstart.sh: tests/store/test_scan_start (the start-up scan
# on issue 39's store, each object verified once, with its control) on
# SQLite and, copied there, on a throwaway PostgreSQL cluster
# (tests/pg_cluster.sh). Without postgresql-15 the SQLite half runs and the
# PostgreSQL half is skipped.
. "$top_srcdir/tests/pg_cluster.sh"
pg_cluster_run_test "$top_builddir/tests/store/test_scan_start" 300
