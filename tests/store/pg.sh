#!/bin/bash
# tests/store/pg.sh: the store's SQL driver (store/db.h) on SQLite and on a
# throwaway PostgreSQL cluster (tests/pg_cluster.sh: initdb + pg_ctl of
# Debian's postgresql-15 in a temp dir, as an unprivileged user, stopped
# and removed at the end whatever happens), through tests/store/test_db;
# then assertions of its own: the cluster's postmaster ran to the end of
# the test (the control) and has exited after it, and its directory is
# gone. Without postgresql-15 the C test runs its SQLite half and skips
# the rest.
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
out=$(mktemp)
WORLD_TEST_PG_URI=$PG_URI WORLD_TEST_PG_TCP=$PG_TCP WORLD_TEST_PG_STOP=$PG_STOP WORLD_TEST_PG_START=$PG_START \
  timeout 120 "$test_db" >"$out"
rc=$?
pid=$(head -n 1 "$PG_DIR/data/postmaster.pid" 2>/dev/null)
pstate() { sed -n 's/^[0-9]* (.*) \([A-Z]\).*/\1/p' "/proc/$1/stat" 2>/dev/null; }
before=$(pstate "$pid")
dir=$PG_DIR
pg_cluster_cleanup
# test_db's lines without its plan, then ours, then the plan of both
grep -v '^1\.\.[0-9]*$' "$out"
n=$(grep -cE '^(not )?ok ' "$out")
plan=$(grep -E '^1\.\.[0-9]+$' "$out")
rm -f "$out"
[ -n "$plan" ] || rc=1
mine() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; rc=1; fi; }
case "$pid" in ''|*[!0-9]*) mine 1 "the cluster's postmaster pid was read ($dir/data/postmaster.pid)" ;;
  *) [ -n "$before" ] && [ "$before" != Z ]; mine $? "control: the cluster's postmaster ($pid) ran until the end of the test"
     # exited: no /proc entry, or a zombie its new parent has not reaped yet
     state=$(pstate "$pid")
     [ -z "$state" ] || [ "$state" = Z ]; mine $? "the cluster's postmaster ($pid) has exited after the test${state:+ (state $state)}" ;; esac
[ ! -e "$dir" ]; mine $? "its directory $dir is removed"
echo "1..$n"
exit $rc
