# audit/: `worldd audit` (audit/audit.h) and its probe (docs/escape-suite.md).
# The judge and the host side are trusted code in libworld; the probe plays
# the interpreter inside capsules, whose roots hold no libc: it is static,
# includes nothing of World and is never sanitized (like interp/ailang-lite).
# Installed in $(pkglibexecdir) beside ailang-lite: worldd audit runs it.
libworld_a_SOURCES += audit/audit.c audit/audit.h audit/host.c audit/host.h
pkglibexec_PROGRAMS += audit/world-probe
audit_world_probe_SOURCES = audit/probe.c
audit_world_probe_CFLAGS = -std=gnu11 -Wall -Wextra
audit_world_probe_LDFLAGS = -static
