# supervisor/: capsule lifecycle, deadlines, admission, the frame protocol
# (docs/protocol.md).
libworld_a_SOURCES += supervisor/frame.c supervisor/frame.h \
	supervisor/launcher.h supervisor/launch_unconfined.c supervisor/launch_capsule.c \
	supervisor/agent.c supervisor/agent.h \
	supervisor/spawner.c supervisor/spawner.h \
	supervisor/supervisor.c supervisor/supervisor.h \
	supervisor/testbroker.c supervisor/testbroker.h \
	supervisor/exec.c supervisor/exec.h

# Tests. The stub interpreter is static like ailang-lite (capsule roots hold
# no libc) and unsanitized (it runs inside capsules).
check_PROGRAMS += tests/supervisor/stub-interp tests/supervisor/test_frame \
	tests/supervisor/test_supervisor tests/supervisor/test_load
tests_supervisor_stub_interp_SOURCES = tests/supervisor/stub_interp.c
tests_supervisor_stub_interp_CFLAGS = -std=gnu11 -Wall -Wextra
tests_supervisor_stub_interp_LDFLAGS = -static
tests_supervisor_test_frame_SOURCES = tests/supervisor/test_frame.c
tests_supervisor_test_frame_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_supervisor_test_frame_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS)
tests_supervisor_test_supervisor_SOURCES = tests/supervisor/test_supervisor.c tests/supervisor/suptest.h
tests_supervisor_test_supervisor_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_supervisor_test_supervisor_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
tests_supervisor_test_load_SOURCES = tests/supervisor/test_load.c tests/supervisor/suptest.h
tests_supervisor_test_load_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_supervisor_test_load_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/supervisor/test_frame tests/supervisor/test_supervisor tests/supervisor/test_load
# Tool runs (sup_run_tool) with a static stub tool interpreter.
check_PROGRAMS += tests/supervisor/tool-stub tests/supervisor/test_tool
tests_supervisor_tool_stub_SOURCES = tests/supervisor/tool_stub.c
tests_supervisor_tool_stub_CFLAGS = -std=gnu11 -Wall -Wextra
tests_supervisor_tool_stub_LDFLAGS = -static
tests_supervisor_test_tool_SOURCES = tests/supervisor/test_tool.c tests/supervisor/suptest.h
tests_supervisor_test_tool_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_supervisor_test_tool_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/supervisor/test_tool
# The capsule spawner (supervisor/spawner.h): its own tests (as root also
# run as nobody), and the suites above again with the spawner making every
# capsule (SUPTEST_SPAWNER=1).
check_PROGRAMS += tests/supervisor/test_spawner
tests_supervisor_test_spawner_SOURCES = tests/supervisor/test_spawner.c tests/supervisor/suptest.h
tests_supervisor_test_spawner_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_supervisor_test_spawner_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/supervisor/test_spawner tests/supervisor/spawner_unpriv.sh tests/supervisor/spawner.sh
EXTRA_DIST += tests/supervisor/spawner_unpriv.sh tests/supervisor/spawner.sh
TESTS += tests/supervisor/invoke.sh
EXTRA_DIST += tests/supervisor/invoke.sh

# The supervisor benchmark (run by `make bench`, see bench/local.mk).
noinst_PROGRAMS += bench/supervisor_bench
bench_supervisor_bench_SOURCES = bench/supervisor_bench.c
bench_supervisor_bench_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
bench_supervisor_bench_LDADD = libworld.a $(WORLD_DEP_LIBS) -lpthread
EXTRA_DIST += bench/supervisor_bench.sh

# The hostile interpreter of the escape suite (issue 23, item 3): a static,
# unsanitized native program pinned as the interpreter, handed the frame
# fds by a compromised agent (sup_set_agent) in tests/supervisor/test_hostile.
check_PROGRAMS += tests/supervisor/hostile-peer tests/supervisor/test_hostile
tests_supervisor_hostile_peer_SOURCES = tests/supervisor/hostile_peer.c
tests_supervisor_hostile_peer_CFLAGS = -std=gnu11 -Wall -Wextra
tests_supervisor_hostile_peer_LDFLAGS = -static
tests_supervisor_test_hostile_SOURCES = tests/supervisor/test_hostile.c tests/supervisor/suptest.h
tests_supervisor_test_hostile_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_supervisor_test_hostile_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/supervisor/test_hostile
# Cancellation of a running call (struct sup_cancel).
check_PROGRAMS += tests/supervisor/test_cancel
tests_supervisor_test_cancel_SOURCES = tests/supervisor/test_cancel.c tests/supervisor/suptest.h
tests_supervisor_test_cancel_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_supervisor_test_cancel_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/supervisor/test_cancel
# The exec capsule (issue 40): exec_run drives one sup_run_exec, exec.sh the
# toolchain runs and the attempts, as root and as an unprivileged user.
check_PROGRAMS += tests/supervisor/exec_run
tests_supervisor_exec_run_SOURCES = tests/supervisor/exec_run.c
tests_supervisor_exec_run_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_supervisor_exec_run_LDADD = libworld.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/supervisor/exec.sh
EXTRA_DIST += tests/supervisor/exec.sh tests/supervisor/exec/attack.c
