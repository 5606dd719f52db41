# tests/escape/: the capsule escape suite (docs/escape-suite.md). The probe
# plays the interpreter inside capsules, whose roots hold no libc: it is
# static and never sanitized (like interp/ailang-lite).
check_PROGRAMS += tests/escape/probe
tests_escape_probe_SOURCES = tests/escape/probe.c
tests_escape_probe_CFLAGS = -std=gnu11 -Wall -Wextra
tests_escape_probe_LDFLAGS = -static
ESCAPE_TESTS = tests/escape/controls.sh tests/escape/confined.sh tests/escape/posture.sh tests/escape/worktree.sh
TESTS += $(ESCAPE_TESTS)
EXTRA_DIST += $(ESCAPE_TESTS) tests/escape/lib.sh tests/escape/judge.py tests/escape/unconfined-run.sh
