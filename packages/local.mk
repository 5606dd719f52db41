# packages/: transition packages published with `world-publish transitions`
# (packages/README.md): quickstart (tools.echo), se-tools (the nine coding
# tools, workspace-exec among them, and the example programs Ailang.Discover
# searches) and conformance (the MCP conformance suite's fixture tools,
# prompts and resources).
EXTRA_DIST += packages/README.md \
	packages/quickstart/transitions.json packages/quickstart/echo.ail \
	packages/se-tools/transitions.json \
	packages/se-tools/ailang-read.ail packages/se-tools/ailang-write.ail \
	packages/se-tools/ailang-edit.ail packages/se-tools/ailang-check.ail \
	packages/se-tools/ailang-run.ail packages/se-tools/builtins-search.ail \
	packages/se-tools/examples-search.ail packages/se-tools/ailang-cli.ail \
	packages/se-tools/workspace-exec.ail \
	packages/se-tools/examples \
	packages/conformance

# Tests: every source checks and passes its inline tests, plans obey
# docs/design.md §5.2/§5.4, refusals, manifests, examples.
TESTS += tests/packages/packages.sh
EXTRA_DIST += tests/packages/packages.sh tests/packages/packages.py
# workspace-exec's plan phase against the reference's pinned plan bytes.
TESTS += tests/packages/workspace_exec.sh
EXTRA_DIST += tests/packages/workspace_exec.sh

# The tools called through `worldd call` on a real worktree: a fixture
# registers a manifest's descriptors through the store API and mints a
# session (publishing has its own tests).
check_PROGRAMS += tests/packages/packages-fixture
tests_packages_packages_fixture_SOURCES = tests/packages/fixture.c tests/coordinator/ctest.h
tests_packages_packages_fixture_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_packages_packages_fixture_LDADD = libworld.a $(WORLD_DEP_LIBS) -lpthread
TESTS += tests/packages/calls.sh
EXTRA_DIST += tests/packages/calls.sh

# make install: every file of the packages (manifests, sources, examples)
# under $(pkgdatadir)/packages, paths as in the source tree (Makefile.am).
install-world-packages:
	cd $(srcdir) && for f in $$(find packages -name '*.json' -o -name '*.ail' -o -name '*.md' | sort); do \
	  $(MKDIR_P) "$(DESTDIR)$(pkgdatadir)/$${f%/*}" && $(INSTALL_DATA) "$$f" "$(DESTDIR)$(pkgdatadir)/$$f" || exit 1; \
	done
uninstall-world-packages:
	cd $(srcdir) && for f in $$(find packages -name '*.json' -o -name '*.ail' -o -name '*.md'); do \
	  rm -f "$(DESTDIR)$(pkgdatadir)/$$f"; \
	done
.PHONY: install-world-packages uninstall-world-packages
