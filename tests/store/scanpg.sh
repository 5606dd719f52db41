#!/bin/bash
# tests/store/scanpg.sh: the integrity scan on a throwaway PostgreSQL
# cluster (tests/pg_cluster.sh, as tests/store/pg.sh) beside SQLite,
# through tests/store/test_scan_pg: run twice, the second time with the
# scan's cursors paged by 13 rows (WORLD_TEST_SCAN_PAGE, test builds), so
# every cursor crosses page boundaries on both backends. Without
# postgresql-15 the SQLite half runs and the PostgreSQL half is skipped.
. "$top_srcdir/tests/pg_cluster.sh"
t="$top_builddir/tests/store/test_scan_pg"
[ -x "$t" ] || { echo "Bail out! $t not built"; exit 1; }
if ! pg_cluster_find; then
  WORLD_TEST_PG_SKIP="postgresql-15 is not installed (no initdb/pg_ctl in /usr/lib/postgresql/15/bin or \$PG_BINDIR)" \
    timeout 120 "$t"
  exit $?
fi
if ! pg_cluster_start; then
  echo "Bail out! could not start a throwaway PostgreSQL cluster (see the line above)"
  exit 1
fi
out=$(mktemp)
WORLD_TEST_PG_URI=$PG_URI timeout 300 "$t" >"$out"
rc=$?
WORLD_TEST_PG_URI=$PG_URI WORLD_TEST_SCAN_PAGE=13 timeout 300 "$t" >"$out.13"
rc13=$?
pg_cluster_cleanup
# both runs' lines under one plan, the second's renumbered and marked
awk 'FNR == 1 && NR != 1 { again = 1; print "# again, the cursors paged by 13 rows" }
     /^1\.\.[0-9]+$/ { next }
     /^(not )?ok [0-9]+/ { n++; sub(/ok [0-9]+/, "ok " n); if (again) $0 = $0 " [pages of 13]" }
     { print }
     END { print "1.." n }' "$out" "$out.13"
rm -f "$out" "$out.13"
[ $rc -eq 0 ] && [ $rc13 -eq 0 ]
