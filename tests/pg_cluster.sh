# tests/pg_cluster.sh: a throwaway PostgreSQL cluster for a test (source it).
#   pg_cluster_find        PG_BIN = the directory of initdb and pg_ctl
#                          ($PG_BINDIR, else Debian's postgresql-15); 1 when
#                          postgresql-15 is not installed
#   pg_cluster_start       initdb in a new temp dir as an unprivileged user
#                          (root: nobody, through runuser), then start it
#                          on a unix socket in that dir and 127.0.0.1 on a
#                          random port; database "world"; superuser
#                          "worldsu" trusted on the socket, password
#                          (scram-sha-256) authentication over TCP. Sets
#                          PG_DIR, PG_PORT, PG_SOCK, PG_URI (the superuser
#                          over the socket), PG_TCP (127.0.0.1:PORT),
#                          PG_STOP and PG_START (commands that stop and
#                          start it again). Installs an EXIT trap that stops
#                          it and removes PG_DIR. The server runs with
#                          fsync=off (a test's cluster need not survive a
#                          crash of the machine) unless PG_CLUSTER_DURABLE=1:
#                          benchmarks of durable commits set it (fsync=on,
#                          synchronous_commit=on, the server's defaults).
#   pg_cluster_or_skip W   a TAP shell test's start: skip W and end the test
#                          without postgresql-15 or the driver, else start
#   pg_cluster_cleanup     what the trap does (stop -m immediate, kill -9
#                          of its postmaster if still there, rm -rf)
# Every step is bounded (pg_ctl -t, timeout); a failure prints one line to
# stderr and returns 1.
pg_cluster_find() {
  local d
  for d in "${PG_BINDIR:-}" /usr/lib/postgresql/15/bin; do
    if [ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ]; then PG_BIN=$d; return 0; fi
  done
  return 1
}

pg_cluster_cleanup() {
  [ -n "$PG_DIR" ] && [ -d "$PG_DIR" ] || return 0
  if [ -f "$PG_DIR/data/postmaster.pid" ]; then
    (cd / && timeout 20 "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w -t 15 stop >/dev/null 2>&1)
    if [ -f "$PG_DIR/data/postmaster.pid" ]; then
      local pid; pid=$(head -n 1 "$PG_DIR/data/postmaster.pid" 2>/dev/null)
      case "$pid" in ''|*[!0-9]*) ;; *) kill -9 "$pid" 2>/dev/null ;; esac
    fi
  fi
  rm -rf "$PG_DIR"
  PG_DIR=
}

pg_cluster_start() {
  PG_OWNER= PG_AS=()
  if [ "$(id -u)" -eq 0 ]; then # initdb and postgres refuse root
    PG_OWNER=${PG_TEST_USER:-nobody}
    command -v runuser >/dev/null || { echo "pg_cluster: runuser not found (util-linux)" >&2; return 1; }
    PG_AS=(runuser -u "$PG_OWNER" --)
  fi
  PG_DIR=$(mktemp -d /tmp/world-pg-XXXXXX) || return 1
  trap pg_cluster_cleanup EXIT
  mkdir -p "$PG_DIR/sock" "$PG_DIR/data" || return 1
  [ -z "$PG_OWNER" ] || chown -R "$PG_OWNER" "$PG_DIR" || return 1
  chmod 700 "$PG_DIR/data" || return 1
  if ! (cd / && timeout 60 "${PG_AS[@]}" "$PG_BIN/initdb" -D "$PG_DIR/data" -U worldsu -E UTF8 --no-locale \
        --auth-local=trust --auth-host=scram-sha-256 --no-sync >"$PG_DIR/initdb.log" 2>&1); then
    echo "pg_cluster: initdb as ${PG_OWNER:-$(id -un)} failed: $(tail -n 3 "$PG_DIR/initdb.log" | tr '\n' ' ')" >&2; return 1
  fi
  PG_SOCK=$PG_DIR/sock
  local try nosync="-c fsync=off"
  [ "${PG_CLUSTER_DURABLE:-0}" = 1 ] && nosync=

  for try in 1 2 3 4 5; do
    PG_PORT=$((20000 + RANDOM % 40000))
    PG_START="cd / && timeout 40 ${PG_AS[*]} '$PG_BIN/pg_ctl' -D '$PG_DIR/data' -l '$PG_DIR/server.log' -w -t 30 -o \"-p $PG_PORT -k $PG_SOCK -c listen_addresses=127.0.0.1 $nosync\" start >/dev/null"
    PG_STOP="cd / && timeout 40 ${PG_AS[*]} '$PG_BIN/pg_ctl' -D '$PG_DIR/data' -w -t 30 -m fast stop >/dev/null"
    if bash -c "$PG_START" 2>>"$PG_DIR/start.err"; then break; fi
    PG_PORT=
  done
  if [ -z "$PG_PORT" ]; then
    echo "pg_cluster: pg_ctl start failed 5 times: $(tail -n 3 "$PG_DIR/server.log" 2>/dev/null | tr '\n' ' ')" >&2; return 1
  fi
  PG_URI="postgresql://worldsu@/world?host=$PG_SOCK&port=$PG_PORT"
  PG_TCP="127.0.0.1:$PG_PORT"
  if ! timeout 30 "$PG_BIN/createdb" -h "$PG_SOCK" -p "$PG_PORT" -U worldsu world 2>"$PG_DIR/createdb.err"; then
    echo "pg_cluster: createdb world failed: $(head -n 1 "$PG_DIR/createdb.err")" >&2; return 1
  fi
  return 0
}

# pg_cluster_or_skip WHAT: the start of a TAP shell test on a throwaway
# cluster (tests/tap.sh sourced first): without postgresql-15, or in a
# build without the PostgreSQL driver, one skip naming WHAT and the whole
# test ends there (exit 0); otherwise the cluster is started (a bail out
# when it does not start) and PG_* are set as by pg_cluster_start.
pg_cluster_or_skip() {
  if ! pg_cluster_find; then
    skip "postgresql-15 (initdb, pg_ctl) is not installed" "$1"
    done_testing
    exit 0
  fi
  if ! grep -q -- '-DWORLD_HAVE_PG=1' "$top_builddir/Makefile"; then
    skip "built without PostgreSQL" "$1"
    done_testing
    exit 0
  fi
  pg_cluster_start || bail "could not start a throwaway PostgreSQL cluster"
}

# pg_cluster_run_test PROGRAM SECONDS: the whole of a C test that runs on a
# throwaway cluster (tests/store/pgstore.sh, pggroup.sh, archive_pg.sh):
# without postgresql-15 PROGRAM runs with WORLD_TEST_PG_SKIP (its PostgreSQL
# half skipped with that reason), else with WORLD_TEST_PG_URI on a cluster
# started for it and removed after; PROGRAM's exit code (a bail out when
# it is not built or the cluster does not start).
pg_cluster_run_test() {
  local t=$1 secs=$2 rc
  [ -x "$t" ] || { echo "Bail out! $t not built"; return 1; }
  if ! pg_cluster_find; then
    WORLD_TEST_PG_SKIP="postgresql-15 is not installed (no initdb/pg_ctl in /usr/lib/postgresql/15/bin or \$PG_BINDIR)" \
      timeout 60 "$t"
    return $?
  fi
  if ! pg_cluster_start; then
    echo "Bail out! could not start a throwaway PostgreSQL cluster (see the line above)"
    return 1
  fi
  WORLD_TEST_PG_URI=$PG_URI timeout "$secs" "$t"
  rc=$?
  pg_cluster_cleanup
  return $rc
}
