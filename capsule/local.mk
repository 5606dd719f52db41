# capsule/: Linux confinement for interpreter runs (docs/design.md §4): the pin,
# the setup sequence, the cgroup manager, the namespace lifecycle, profiles as
# data, the denial report, one-run helper.
libworld_a_SOURCES += capsule/capsule.c capsule/capsule.h capsule/cgroups.c capsule/namespaces.c capsule/pin.c capsule/pin.h capsule/profile.c capsule/profile.h \
	capsule/profile_diff.c capsule/profile_diff.h \
	capsule/run.c capsule/run.h \
	capsule/exec_capsule.c capsule/exec_capsule.h capsule/capsule_int.h

# Static test programs run as the "interpreter" inside capsules.
check_PROGRAMS += tests/capsule/fixture
tests_capsule_fixture_SOURCES = tests/capsule/fixture.c
tests_capsule_fixture_CFLAGS = -std=gnu11 -Wall -Wextra
tests_capsule_fixture_LDFLAGS = -static

check_PROGRAMS += tests/capsule/test_capsule
# cgroup v2 delegation on a fake cgroupfs tree (capsule_cgroup_delegate)
check_PROGRAMS += tests/capsule/test_delegate
tests_capsule_test_delegate_SOURCES = tests/capsule/test_delegate.c
tests_capsule_test_delegate_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_capsule_test_delegate_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS)
TESTS += tests/capsule/test_delegate
tests_capsule_test_capsule_SOURCES = tests/capsule/test_capsule.c
tests_capsule_test_capsule_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_capsule_test_capsule_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS)
TESTS += tests/capsule/test_capsule tests/capsule/run.sh tests/capsule/unprivileged.sh tests/capsule/interrupt.sh \
	tests/capsule/go.sh tests/capsule/profile.sh
EXTRA_DIST += tests/capsule/run.sh tests/capsule/unprivileged.sh tests/capsule/interrupt.sh tests/capsule/ctrlc.py tests/capsule/go.sh \
	tests/capsule/profile.sh tests/capsule/go/main.go

# The benchmark (bench/capsule_bench.sh; registered in bench/local.mk).
noinst_PROGRAMS += bench/capsule_bench bench/capsule_noop
bench_capsule_bench_SOURCES = bench/capsule_bench.c
bench_capsule_bench_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
bench_capsule_bench_LDADD = libworld.a $(WORLD_DEP_LIBS)
bench_capsule_noop_SOURCES = bench/capsule_noop.c
bench_capsule_noop_CFLAGS = -std=gnu11 -Wall -Wextra
bench_capsule_noop_LDFLAGS = -static
EXTRA_DIST += bench/capsule_bench.sh

# The pin's ways of hashing (bench/pin_bench.sh; registered in bench/local.mk).
noinst_PROGRAMS += bench/pin_bench
bench_pin_bench_SOURCES = bench/pin_bench.c
bench_pin_bench_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
bench_pin_bench_CFLAGS += $(MD_CFLAGS)
bench_pin_bench_LDADD = libworld.a $(WORLD_DEP_LIBS) $(MD_LIBS)
EXTRA_DIST += bench/pin_bench.sh

# The seccomp programs of every profile, built once at build time by a
# generator linked with libseccomp and embedded in libworld.a (the runtime
# loads them; `worldd profile show --format pfc|bpf` prints them).
noinst_PROGRAMS += capsule/seccomp_gen
capsule_seccomp_gen_SOURCES = capsule/seccomp_gen.c capsule/profile.c capsule/profile.h common/error.c
capsule_seccomp_gen_CFLAGS = $(AM_CFLAGS) $(SECCOMP_CFLAGS) $(JANSSON_CFLAGS) -DCAPSULE_SECCOMP_GENERATOR
capsule_seccomp_gen_LDADD = $(SECCOMP_LIBS) $(JANSSON_LIBS)
nodist_libworld_a_SOURCES = capsule/seccomp_programs.c
BUILT_SOURCES = capsule/seccomp_programs.c
CLEANFILES += capsule/seccomp_programs.c
capsule/seccomp_programs.c: capsule/seccomp_gen$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) capsule && ./capsule/seccomp_gen$(EXEEXT) $@

check_PROGRAMS += tests/capsule/test_seccomp
tests_capsule_test_seccomp_SOURCES = tests/capsule/test_seccomp.c
tests_capsule_test_seccomp_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_capsule_test_seccomp_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS)
TESTS += tests/capsule/test_seccomp

# A whole `worldd run` beside bubblewrap and an unconfined run
# (bench/run_bench.sh; registered in bench/local.mk).
noinst_PROGRAMS += bench/run_bench
bench_run_bench_SOURCES = bench/run_bench.c
bench_run_bench_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
bench_run_bench_LDADD = libworld.a $(WORLD_DEP_LIBS) -lpthread
EXTRA_DIST += bench/run_bench.sh
