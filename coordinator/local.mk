# coordinator/: one invocation = input -> capsule -> broker -> one committed
# log entry (coordinator.h), and reading the registries (registry.h).
libworld_a_SOURCES += coordinator/registry.c coordinator/registry.h \
	coordinator/coordinator.c coordinator/coordinator.h \
	coordinator/provenance.c coordinator/provenance.h coordinator/provclient.c coordinator/provclient.h \
	coordinator/replay.c coordinator/replay.h \
	coordinator/catalog.c coordinator/catalog.h \
	coordinator/confirm.c coordinator/confirm.h

check_PROGRAMS += tests/coordinator/test_coordinator
tests_coordinator_test_coordinator_SOURCES = tests/coordinator/test_coordinator.c tests/coordinator/ctest.h
tests_coordinator_test_coordinator_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_coordinator_test_coordinator_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/coordinator/test_coordinator
check_PROGRAMS += tests/coordinator/test_race
tests_coordinator_test_race_SOURCES = tests/coordinator/test_race.c tests/coordinator/ctest.h
tests_coordinator_test_race_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_coordinator_test_race_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/coordinator/test_race
check_PROGRAMS += tests/coordinator/ctest-fixture
tests_coordinator_ctest_fixture_SOURCES = tests/coordinator/fixture.c tests/coordinator/ctest.h
tests_coordinator_ctest_fixture_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_coordinator_ctest_fixture_LDADD = libworld.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/coordinator/call.sh tests/coordinator/mint.sh tests/coordinator/crash.sh
EXTRA_DIST += tests/coordinator/call.sh tests/coordinator/mint.sh tests/coordinator/crash.sh

# The coordinator benchmark (run by `make bench`, see bench/local.mk).
noinst_PROGRAMS += bench/coordinator_bench
bench_coordinator_bench_SOURCES = bench/coordinator_bench.c tests/coordinator/ctest.h
bench_coordinator_bench_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
bench_coordinator_bench_LDADD = libworld.a $(WORLD_DEP_LIBS) -lpthread
EXTRA_DIST += bench/coordinator_bench.sh

# Provenance walks and replay (provenance.h, replay.h): a fixture store of
# every kind of committed call, and the CLI tests over it.
check_PROGRAMS += tests/coordinator/prov-fixture
tests_coordinator_prov_fixture_SOURCES = tests/coordinator/prov_fixture.c tests/coordinator/ctest.h
tests_coordinator_prov_fixture_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_coordinator_prov_fixture_LDADD = libworld.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/coordinator/prov.sh
EXTRA_DIST += tests/coordinator/prov.sh
check_PROGRAMS += tests/coordinator/test_prov
tests_coordinator_test_prov_SOURCES = tests/coordinator/test_prov.c tests/coordinator/ctest.h
tests_coordinator_test_prov_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_coordinator_test_prov_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/coordinator/test_prov
# The hostile interpreter through the coordinator (issue 23, item 3):
# needs tests/supervisor/hostile-peer and a test-hook build.
check_PROGRAMS += tests/coordinator/test_hostile
tests_coordinator_test_hostile_SOURCES = tests/coordinator/test_hostile.c tests/coordinator/ctest.h
tests_coordinator_test_hostile_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_coordinator_test_hostile_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/coordinator/test_hostile
# A denied syscall commits its evidence only (issue 25, item 4): needs tests/supervisor/stub-interp.
check_PROGRAMS += tests/coordinator/test_denial
tests_coordinator_test_denial_SOURCES = tests/coordinator/test_denial.c tests/coordinator/ctest.h
tests_coordinator_test_denial_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_coordinator_test_denial_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/coordinator/test_denial
check_PROGRAMS += tests/coordinator/test_cancel
tests_coordinator_test_cancel_SOURCES = tests/coordinator/test_cancel.c tests/coordinator/ctest.h
tests_coordinator_test_cancel_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_coordinator_test_cancel_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/coordinator/test_cancel
# Change detection before each call (issue 20 item 2), counted.
check_PROGRAMS += tests/coordinator/test_changes
tests_coordinator_test_changes_SOURCES = tests/coordinator/test_changes.c tests/coordinator/ctest.h
tests_coordinator_test_changes_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_coordinator_test_changes_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/coordinator/test_changes
check_PROGRAMS += tests/coordinator/test_confirm
tests_coordinator_test_confirm_SOURCES = tests/coordinator/test_confirm.c
tests_coordinator_test_confirm_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_coordinator_test_confirm_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/coordinator/test_confirm
