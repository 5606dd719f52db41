# store/: the store (objects, log, worlds, journal, sessions) over the driver seam, the integrity scan.
# The core (engine-neutral): every statement through the driver seam (db.h)
# and the table of sql.c, every engine-specific step through struct
# ws_engine (store_internal.h).
libworld_a_SOURCES += store/store.h store/store_internal.h store/open.c store/txn.c store/objects.c store/log.c \
	store/journal.c store/sessions.c store/episodes.c store/archive.c store/scan.c store/scan.h \
	store/sql.c store/sql.h store/stmt.c store/group.c store/group.h \
	store/backup.c store/backup.h store/changes.c \
	store/copy.c store/copy.h store/tree.c store/tree.h store/home.c store/home.h
# The driver seam and its dispatch; the SQLite driver and the store's SQLite
# engine (every sqlite3_* call: db_sqlite*.c, one internal header); the
# PostgreSQL engine over the PostgreSQL driver (db_pg.c, below) and its
# schema.
libworld_a_SOURCES += store/db.c store/db.h store/db_internal.h \
	store/db_sqlite.c store/db_sqlite.h store/db_sqlite_open.c store/db_sqlite_schema.c store/db_sqlite_queue.c \
	store/db_sqlite_ckpt.c store/db_sqlite_wal.c store/walbuf.h store/db_sqlite_backup.c \
	store/db_pg_store.c store/schema_pg.c store/schema_pg.h
# a store opened with a postgresql:// password file (--store-password-file)
libworld_a_SOURCES += store/open_opts.c store/open_opts.h

# The PostgreSQL driver of store/db.h: its own
# library, because libpq cannot be linked statically on Debian 12
# (configure.ac, docs/HACKING.md). Only dynamically linked programs link it
# (today tests/store/test_db), and call wdb_pg_enable() at start-up.
if HAVE_PG
noinst_LIBRARIES += libworld_pg.a
libworld_pg_a_SOURCES = store/db_pg.c
libworld_pg_a_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS) $(PQ_CFLAGS)
WORLD_PG_LIBS = libworld_pg.a $(PQ_LIBS)
else
WORLD_PG_LIBS =
endif

# The SQL driver on both databases: tests/store/pg.sh starts a throwaway
# PostgreSQL cluster and runs it (SQLite alone, the PostgreSQL half
# skipped, when postgresql-15 is not installed).
check_PROGRAMS += tests/store/test_db
tests_store_test_db_SOURCES = tests/store/test_db.c
tests_store_test_db_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS) $(PQ_CFLAGS)
tests_store_test_db_LDADD = $(WORLD_PG_LIBS) libworld.a tests/libtap.a $(WORLD_DEP_LIBS)
TESTS += tests/store/pg.sh
EXTRA_DIST += tests/store/pg.sh tests/pg_cluster.sh
# The store itself (store.h) on PostgreSQL through the driver seam: the
# same history on both backends, refs and entry hashes compared
# (tests/store/pgstore.sh starts the cluster).
check_PROGRAMS += tests/store/test_pgstore
tests_store_test_pgstore_SOURCES = tests/store/test_pgstore.c tests/store/sfix.h
tests_store_test_pgstore_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_store_test_pgstore_LDADD = $(WORLD_PG_LIBS) libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/store/pgstore.sh
EXTRA_DIST += tests/store/pgstore.sh

check_PROGRAMS += tests/store/test_canon
TESTS += tests/store/test_canon
tests_store_test_canon_SOURCES = tests/store/test_canon.c
tests_store_test_canon_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_store_test_canon_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS)

check_PROGRAMS += tests/store/test_store
TESTS += tests/store/test_store
tests_store_test_store_SOURCES = tests/store/test_store.c
tests_store_test_store_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_store_test_store_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS)

check_PROGRAMS += tests/store/test_members
TESTS += tests/store/test_members
tests_store_test_members_SOURCES = tests/store/test_members.c
tests_store_test_members_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_store_test_members_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS)

check_PROGRAMS += tests/store/test_crash
TESTS += tests/store/test_crash
tests_store_test_crash_SOURCES = tests/store/test_crash.c
tests_store_test_crash_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_store_test_crash_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS)

check_PROGRAMS += tests/store/test_jschema
TESTS += tests/store/test_jschema
tests_store_test_jschema_SOURCES = tests/store/test_jschema.c
tests_store_test_jschema_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_store_test_jschema_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS)

# The official JSON Schema Test Suite for every supported keyword; the suite
# itself is installed by scripts/install-test-deps.sh (skips without it).
check_PROGRAMS += tests/store/jschema_suite
TESTS += tests/store/jschema_suite
tests_store_jschema_suite_SOURCES = tests/store/jschema_suite.c
tests_store_jschema_suite_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_store_jschema_suite_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS)

# Every statement of store/sql.h on an indexed path (EXPLAIN QUERY PLAN),
# and the work of whole-store and per-entry operations at N and 8N entries.
check_PROGRAMS += tests/store/test_query_plans
TESTS += tests/store/test_query_plans
tests_store_test_query_plans_SOURCES = tests/store/test_query_plans.c tests/store/sbulk.h
tests_store_test_query_plans_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_store_test_query_plans_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS)
check_PROGRAMS += tests/store/test_group
TESTS += tests/store/test_group
tests_store_test_group_SOURCES = tests/store/test_group.c
tests_store_test_group_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_store_test_group_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
# Several writers (threads' handles and processes) on one store.
check_PROGRAMS += tests/store/test_writers
TESTS += tests/store/test_writers
tests_store_test_writers_SOURCES = tests/store/test_writers.c tests/store/sfix.h
tests_store_test_writers_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_store_test_writers_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS)
check_PROGRAMS += tests/store/test_growth
TESTS += tests/store/test_growth
tests_store_test_growth_SOURCES = tests/store/test_growth.c tests/store/sbulk.h tests/store/swork.h
tests_store_test_growth_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_store_test_growth_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread

TESTS += tests/store/cli_store.sh
EXTRA_DIST += tests/store/cli_store.sh

# The store benchmark (run by `make bench`, see bench/local.mk).
noinst_PROGRAMS += bench/store_bench
bench_store_bench_SOURCES = bench/store_bench.c
bench_store_bench_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
bench_store_bench_LDADD = $(WORLD_PG_LIBS) libworld.a $(WORLD_DEP_LIBS) -lpthread
EXTRA_DIST += bench/store_bench.sh

# the store fixtures shared by the store tests and the store benchmark
EXTRA_DIST += tests/store/sfix.h tests/store/sbulk.h tests/store/swork.h
check_PROGRAMS += tests/store/test_scan
TESTS += tests/store/test_scan
tests_store_test_scan_SOURCES = tests/store/test_scan.c tests/store/sbulk.h tests/store/sfix.h
tests_store_test_scan_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_store_test_scan_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS)
# The scan on PostgreSQL beside SQLite: the same history, the same damage,
# the same lines (tests/store/scanpg.sh starts the cluster).
check_PROGRAMS += tests/store/test_scan_pg
tests_store_test_scan_pg_SOURCES = tests/store/test_scan_pg.c tests/store/sbulk.h tests/store/sfix.h
tests_store_test_scan_pg_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_store_test_scan_pg_LDADD = $(WORLD_PG_LIBS) libworld.a tests/libtap.a $(WORLD_DEP_LIBS)
TESTS += tests/store/scanpg.sh
EXTRA_DIST += tests/store/scanpg.sh
# The start-up scan covers its budget on the store of issue 39 (item 3):
# each object verified once, counted, with its control.
# (tests/store/scanstart.sh: on SQLite and on a throwaway PostgreSQL cluster)
check_PROGRAMS += tests/store/test_scan_start
TESTS += tests/store/scanstart.sh
EXTRA_DIST += tests/store/scanstart.sh
tests_store_test_scan_start_SOURCES = tests/store/test_scan_start.c tests/store/seff.h tests/store/sbulk.h tests/store/sfix.h
tests_store_test_scan_start_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_store_test_scan_start_LDADD = $(WORLD_PG_LIBS) libworld.a tests/libtap.a $(WORLD_DEP_LIBS)
# and the daemon's own start-up line on that store
TESTS += tests/store/scan_start.sh
EXTRA_DIST += tests/store/scan_start.sh
# Checkpoints off the commit path (store/db_sqlite_ckpt.c).
check_PROGRAMS += tests/store/test_ckpt
TESTS += tests/store/test_ckpt
tests_store_test_ckpt_SOURCES = tests/store/test_ckpt.c
tests_store_test_ckpt_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_store_test_ckpt_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
# The write queue (store/db_sqlite_queue.c), across processes.
check_PROGRAMS += tests/store/test_queue
TESTS += tests/store/test_queue
tests_store_test_queue_SOURCES = tests/store/test_queue.c
tests_store_test_queue_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_store_test_queue_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS)
# worldd store copy between SQLite and PostgreSQL, and worldd backup of a
# PostgreSQL store (store/copy.c; a throwaway cluster, skipped without
# postgresql-15 after the SQLite half).
TESTS += tests/store/copy.sh
EXTRA_DIST += tests/store/copy.sh

# The WAL-gathering VFS of durable writers (store/db_sqlite_wal.c).
check_PROGRAMS += tests/store/test_walbuf
TESTS += tests/store/test_walbuf
tests_store_test_walbuf_SOURCES = tests/store/test_walbuf.c
tests_store_test_walbuf_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_store_test_walbuf_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread

# Group commit on PostgreSQL (tests/store/pggroup.sh starts the cluster).
check_PROGRAMS += tests/store/test_pggroup
tests_store_test_pggroup_SOURCES = tests/store/test_pggroup.c tests/store/sfix.h
tests_store_test_pggroup_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_store_test_pggroup_LDADD = $(WORLD_PG_LIBS) libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/store/pggroup.sh
EXTRA_DIST += tests/store/pggroup.sh

# The interpreter archive on PostgreSQL: the archive table, the per-host
# cache (tests/store/archive_pg.sh starts the cluster).
check_PROGRAMS += tests/store/test_archive_pg
tests_store_test_archive_pg_SOURCES = tests/store/test_archive_pg.c
tests_store_test_archive_pg_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_store_test_archive_pg_LDADD = $(WORLD_PG_LIBS) libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/store/archive_pg.sh
EXTRA_DIST += tests/store/archive_pg.sh

# The log's Merkle tree, key and checkpoint in the store (store/tree.h,
# issue 43): on SQLite and on a throwaway PostgreSQL cluster (tree.sh).
check_PROGRAMS += tests/store/test_tree
tests_store_test_tree_SOURCES = tests/store/test_tree.c tests/store/sfix.h
tests_store_test_tree_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_store_test_tree_LDADD = $(WORLD_PG_LIBS) libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/store/tree.sh tests/store/log_pg.sh
EXTRA_DIST += tests/store/tree.sh tests/store/log_pg.sh
# an episode's home (store/home.h, issue 44 item 3): on SQLite and a throwaway PostgreSQL cluster
check_PROGRAMS += tests/store/test_home
tests_store_test_home_SOURCES = tests/store/test_home.c
tests_store_test_home_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_store_test_home_LDADD = $(WORLD_PG_LIBS) libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/store/home_pg.sh
EXTRA_DIST += tests/store/home_pg.sh
