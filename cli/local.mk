# cli/: worldd (operator verbs). Verb tables live in cli/verbs_<component>.c.
bin_PROGRAMS += cli/worldd
cli_worldd_SOURCES = cli/worldd.c cli/verbs.h cli/verbs_store.c cli/verbs_capsule.c \
	cli/verbs_call.c cli/flags.c cli/flags.h cli/verbs_epoch.c \
	cli/attended.c cli/attended.h cli/output.c cli/output.h cli/verbs_prov.c cli/verbs_daemon.c \
	cli/verbs_ops.c cli/default_interp.c cli/default_interp.h cli/verbs_audit.c \
	cli/verbs_copy.c cli/copy_exec.h cli/store_uri.c cli/store_uri.h cli/verbs_log.c
# The installed worldd runs the installed ailang-lite when --ailang-bin is
# omitted, and worldd audit the installed world-probe (audit/local.mk).
cli_worldd_CPPFLAGS = $(AM_CPPFLAGS) -DWORLD_AILANG_LITE_DEFAULT='"$(pkglibexecdir)/ailang-lite"' \
	-DWORLD_PROBE_DEFAULT='"$(pkglibexecdir)/world-probe"'
cli_worldd_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS) -DWORLDD_SERVE_EXEC \
	-DWORLD_PKGLIBEXECDIR='"$(pkglibexecdir)"'
cli_worldd_SOURCES += cli/serve_exec.c cli/serve_exec.h
cli_worldd_LDADD = libworld.a $(WORLDD_DEP_LIBS) -lpthread
cli_worldd_LDFLAGS = $(AM_LDFLAGS) $(WORLDD_LDFLAGS)
# worldd-serve: the same verbs with the daemon linked in (libmicrohttpd and
# GnuTLS under it); `worldd serve` execs it, so no other verb loads them,
# and so does every verb given a postgresql:// --store (cli/store_uri.h):
# it links the store's PostgreSQL driver, which the static worldd cannot.
pkglibexec_PROGRAMS += cli/worldd-serve
cli_worldd_serve_SOURCES = $(cli_worldd_SOURCES)
cli_worldd_serve_CPPFLAGS = $(cli_worldd_CPPFLAGS)
cli_worldd_serve_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS) -DWORLD_PKGLIBEXECDIR='"$(pkglibexecdir)"'
cli_worldd_serve_LDADD = $(WORLD_PG_LIBS) libworld.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/cli_help.sh tests/cli_docs.sh tests/cli_ops.sh tests/cli_run.sh tests/cli_install.sh tests/cli_effect_failed.sh tests/cli_store_absent.sh tests/cli_full_disk.sh tests/cli_man.sh
EXTRA_DIST += tests/cli_help.sh tests/cli_docs.sh tests/cli_ops.sh tests/cli_run.sh tests/cli_install.sh tests/cli_effect_failed.sh tests/cli_store_absent.sh tests/cli_full_disk.sh tests/cli_man.sh
# the layering of docs/architecture.md, "Which folder may use which" (grep on the sources, with controls)
TESTS += tests/cli_layout.sh
EXTRA_DIST += tests/cli_layout.sh

# world-publish: the publisher's program (docs/design.md §7, docs/publishing.md).
bin_PROGRAMS += cli/world-publish
cli_world_publish_SOURCES = cli/world-publish.c cli/attended.c cli/attended.h cli/output.c cli/output.h \
	cli/default_interp.c cli/default_interp.h cli/store_uri.c cli/store_uri.h cli/flags.c cli/flags.h \
	cli/serve_exec.c cli/serve_exec.h
# like worldd, it runs the installed ailang-lite when --ailang-bin is omitted
cli_world_publish_CPPFLAGS = $(AM_CPPFLAGS) -DWORLD_AILANG_LITE_DEFAULT='"$(pkglibexecdir)/ailang-lite"'
cli_world_publish_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS) -DWORLD_PKGLIBEXECDIR='"$(pkglibexecdir)"'
# dynamically linked (as ever), so it takes a postgresql:// --store itself:
# the store's PostgreSQL driver linked in (docs/HACKING.md)
cli_world_publish_LDADD = $(WORLD_PG_LIBS) libworld.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/publish/publish.sh tests/publish/sources.sh tests/publish/handlers.sh
EXTRA_DIST += tests/publish/publish.sh tests/publish/sources.sh tests/publish/handlers.sh tests/publish/pty.py
check_PROGRAMS += tests/publish/attended_probe
tests_publish_attended_probe_SOURCES = tests/publish/attended_probe.c cli/attended.c cli/attended.h
tests_publish_attended_probe_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_publish_attended_probe_LDADD = libworld.a $(WORLD_DEP_LIBS)
TESTS += tests/publish/attended.sh tests/publish/unprivileged.sh
EXTRA_DIST += tests/publish/attended.sh tests/publish/unprivileged.sh
# the impostor interpreter of tests/publish/admit.sh: static, like ailang-lite
check_PROGRAMS += tests/publish/fake-interp
tests_publish_fake_interp_SOURCES = tests/publish/fake_interp.c
tests_publish_fake_interp_CFLAGS = -std=gnu11 -Wall -Wextra
tests_publish_fake_interp_LDFLAGS = -static
TESTS += tests/publish/admit.sh
EXTRA_DIST += tests/publish/admit.sh
TESTS += tests/cli_epoch_nominate.sh
EXTRA_DIST += tests/cli_epoch_nominate.sh
# worldd run --effectful --test-broker applies the broker's plan laws (issue 39)
TESTS += tests/cli_test_broker.sh
EXTRA_DIST += tests/cli_test_broker.sh

# The man page, from --help and --version (help2man, at build time).
man1_MANS += cli/worldd.1
CLEANFILES += cli/worldd.1
CLEANFILES += cli/worldd.h2m
# The pages cite the docs where make install puts them ($(docdir)/NAME.md for
# the texts' docs/NAME.md: WORLD_DOCDIR, scripts/man-verbatim.sh).
cli/worldd.1: cli/worldd$(EXEEXT) $(srcdir)/scripts/man-verbs.sh $(srcdir)/scripts/man-verbatim.sh Makefile
	$(AM_V_GEN)WORLD_DOCDIR='$(docdir)' $(SHELL) $(srcdir)/scripts/man-verbs.sh ./cli/worldd$(EXEEXT) > cli/worldd.h2m && \
	$(HELP2MAN) --no-info --section=1 --include=cli/worldd.h2m \
	  --name="the World operator command line" --output=$@ ./cli/worldd$(EXEEXT) && \
	WORLD_DOCDIR='$(docdir)' $(SHELL) $(srcdir)/scripts/man-verbatim.sh ./cli/worldd$(EXEEXT) $@
man1_MANS += cli/world-publish.1
CLEANFILES += cli/world-publish.1
cli/world-publish.1: cli/world-publish$(EXEEXT) $(srcdir)/scripts/man-verbatim.sh Makefile
	$(AM_V_GEN)$(HELP2MAN) --no-info --section=1 \
	  --name="publish World transitions (the publisher's program)" --output=$@ ./cli/world-publish$(EXEEXT) && \
	WORLD_DOCDIR='$(docdir)' $(SHELL) $(srcdir)/scripts/man-verbatim.sh ./cli/world-publish$(EXEEXT) $@

# world-store-copy: `worldd store copy` and `worldd backup --store
# postgresql://...` (cli/copy_exec.h): dynamically linked with the store's
# PostgreSQL driver, which the static worldd cannot link; worldd execs it
# (beside itself, then in pkglibexecdir).
pkglibexec_PROGRAMS += cli/world-store-copy
cli_world_store_copy_SOURCES = cli/world-store-copy.c cli/verbs_copy.c cli/copy_exec.h cli/flags.c cli/flags.h \
	cli/output.c cli/output.h
cli_world_store_copy_CPPFLAGS = $(AM_CPPFLAGS) -DWORLD_STORE_COPY_PROGRAM
cli_world_store_copy_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS) $(PQ_CFLAGS) -DWORLD_PKGLIBEXECDIR='"$(pkglibexecdir)"'
cli_world_store_copy_LDADD = $(WORLD_PG_LIBS) libworld.a $(WORLD_DEP_LIBS) -lpthread

# the verbs on a postgresql:// store (cli/store_uri.h): a throwaway cluster
TESTS += tests/store/verbs_pg.sh
EXTRA_DIST += tests/store/verbs_pg.sh
# the backend comparison: one history made through the verbs on SQLite and on PostgreSQL
TESTS += tests/store/prov_pg.sh
EXTRA_DIST += tests/store/prov_pg.sh
