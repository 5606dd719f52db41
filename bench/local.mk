# bench/: benchmarks. Each prints figures and ratios; none is a test.
# Append programs to bench_programs and runner scripts to bench_scripts.
bench_programs =
bench_scripts =
bench_programs += bench/store_bench
bench_scripts += bench/store_bench.sh
bench_programs += bench/interp_bench
bench_scripts += bench/interp_bench.sh
bench_programs += bench/supervisor_bench
bench_scripts += bench/supervisor_bench.sh
bench_programs += bench/capsule_bench bench/capsule_noop
bench_scripts += bench/capsule_bench.sh
bench_programs += bench/coordinator_bench
bench_scripts += bench/coordinator_bench.sh
bench_programs += bench/pin_bench
bench_scripts += bench/pin_bench.sh
noinst_PROGRAMS += bench/daemon_bench
bench_daemon_bench_SOURCES = bench/daemon_bench.c
bench_daemon_bench_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
bench_daemon_bench_LDADD = libworld.a $(WORLD_DEP_LIBS) -lpthread
EXTRA_DIST += bench/daemon_bench.sh
bench_programs += bench/daemon_bench
bench_scripts += bench/daemon_bench.sh
bench_programs += bench/run_bench
bench_scripts += bench/run_bench.sh
EXTRA_DIST += bench/bench.h bench/mcp_client.h bench/RESULTS.md
# several daemons and writer processes on one store (issue 20, item 7)
noinst_PROGRAMS += bench/live_bench
bench_live_bench_SOURCES = bench/live_bench.c tests/store/sfix.h
bench_live_bench_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
bench_live_bench_LDADD = libworld.a $(WORLD_DEP_LIBS) -lpthread
EXTRA_DIST += bench/live_bench.sh
bench_programs += bench/live_bench
bench_scripts += bench/live_bench.sh
EXTRA_DIST += bench/pg_live_bench.sh
bench_scripts += bench/pg_live_bench.sh
# the daemon's start-up scan beside the full scan (issue 39, item 3)
noinst_PROGRAMS += bench/scan_bench
bench_scan_bench_SOURCES = bench/scan_bench.c tests/store/seff.h tests/store/sbulk.h tests/store/sfix.h
bench_scan_bench_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
bench_scan_bench_LDADD = libworld.a $(WORLD_DEP_LIBS) -lpthread
EXTRA_DIST += bench/scan_bench.sh
bench_programs += bench/scan_bench
bench_scripts += bench/scan_bench.sh
# an exec call of `true` (issue 40, item 7): the exec capsule vs bwrap vs fork+exec
noinst_PROGRAMS += bench/exec_bench
bench_exec_bench_SOURCES = bench/exec_bench.c
bench_exec_bench_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
bench_exec_bench_LDADD = libworld.a $(WORLD_DEP_LIBS) -lpthread
EXTRA_DIST += bench/exec_bench.sh
bench_programs += bench/exec_bench
bench_scripts += bench/exec_bench.sh
# the transparency log's library (issue 43, item 6): appends, inclusion and
# consistency proofs at 10^6 leaves, the checkpoint signing rate
noinst_PROGRAMS += bench/tlog_bench
bench_tlog_bench_SOURCES = bench/tlog_bench.c tests/tlog/memlog.h
bench_tlog_bench_CFLAGS = $(AM_CFLAGS) $(CRYPTO_CFLAGS)
bench_tlog_bench_LDADD = tlog/libtlog.a $(CRYPTO_LIBS)
EXTRA_DIST += bench/tlog_bench.sh
bench_programs += bench/tlog_bench
bench_scripts += bench/tlog_bench.sh
# the log's Merkle tree and signed checkpoints beside none (issue 43)
noinst_PROGRAMS += bench/tree_bench
bench_tree_bench_SOURCES = bench/tree_bench.c tests/store/sfix.h
bench_tree_bench_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
bench_tree_bench_LDADD = libworld.a $(WORLD_DEP_LIBS) -lpthread
EXTRA_DIST += bench/tree_bench.sh
bench_programs += bench/tree_bench
bench_scripts += bench/tree_bench.sh
# what an episode's home costs an effectful call (issue 44 item 3)
noinst_PROGRAMS += bench/home_bench
bench_home_bench_SOURCES = bench/home_bench.c
bench_home_bench_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
bench_home_bench_LDADD = $(WORLD_PG_LIBS) libworld.a $(WORLD_DEP_LIBS) -lpthread
EXTRA_DIST += bench/home_bench.sh
bench_programs += bench/home_bench
bench_scripts += bench/home_bench.sh
# a call's round trips to a database across a network: a loopback delay
# proxy in front of a throwaway cluster, beside one SQLite daemon (issue 44 item 1)
noinst_PROGRAMS += bench/pg_rtt_bench
bench_pg_rtt_bench_SOURCES = bench/pg_rtt_bench.c
bench_pg_rtt_bench_CFLAGS = $(AM_CFLAGS)
bench_pg_rtt_bench_LDADD = -lpthread
EXTRA_DIST += bench/pg_rtt_bench.sh
bench_programs += bench/pg_rtt_bench
bench_scripts += bench/pg_rtt_bench.sh
