# interp/: ailang-lite, the bundled AILANG-subset interpreter (docs/design.md §11).
# It is linked -static (capsule roots hold no libc). Under --enable-sanitizers
# the static copy stays unsanitized for capsules, and a sanitized dynamic copy
# (ailang-lite-san) is what the interpreter's own tests run directly.
AILANG_LITE_SOURCES = interp/ail.h interp/main.c interp/lex.c interp/parse.c \
	interp/value.c interp/eval.c interp/json.c interp/std.c
# Installed in $(pkglibexecdir): worldd runs it (it is not a command for users' PATH).
pkglibexec_PROGRAMS += interp/ailang-lite
interp_ailang_lite_SOURCES = $(AILANG_LITE_SOURCES)
interp_ailang_lite_CFLAGS = -std=gnu11 -Wall -Wextra
interp_ailang_lite_LDFLAGS = -static
interp_ailang_lite_LDADD = -lm
if SANITIZERS
noinst_PROGRAMS += interp/ailang-lite-san
interp_ailang_lite_san_SOURCES = $(AILANG_LITE_SOURCES)
interp_ailang_lite_san_CFLAGS = $(AM_CFLAGS)
interp_ailang_lite_san_LDADD = -lm
AILANG_LITE_DIRECT_NAME = ailang-lite-san
else
AILANG_LITE_DIRECT_NAME = ailang-lite
# a dynamically linked copy, so that valgrind can track malloc
check_PROGRAMS += interp/ailang-lite-dyn
interp_ailang_lite_dyn_SOURCES = $(AILANG_LITE_SOURCES)
interp_ailang_lite_dyn_CFLAGS = $(AM_CFLAGS)
interp_ailang_lite_dyn_LDADD = -lm
endif

# Tests: the command line (echo transition) and the conformance folder.
TESTS += tests/interp/echo.sh tests/interp/conformance.sh tests/interp/builtins.sh tests/interp/iface.sh
EXTRA_DIST += tests/interp/builtins.sh tests/interp/iface.sh
EXTRA_DIST += tests/interp/echo.sh tests/interp/conformance.sh tests/interp/conformance-lib.sh tests/interp/conformance
TESTS += tests/interp/fuzz.sh tests/interp/robust.sh tests/interp/valgrind.sh
EXTRA_DIST += tests/interp/robust.sh tests/interp/valgrind.sh tests/interp/fuzz.sh tests/interp/fuzz.dict tests/interp/fuzz-corpus interp/fuzz.c

# `make interp-fuzz` builds the libFuzzer target (clang only; never part of
# `all`). Run it as: interp/ailang-lite-fuzz -max_total_time=60 CORPUS_DIR
interp-fuzz:
	clang -std=gnu11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
	  -fno-sanitize-recover=undefined -I$(top_srcdir) \
	  $(srcdir)/interp/fuzz.c $(srcdir)/interp/lex.c $(srcdir)/interp/parse.c \
	  $(srcdir)/interp/value.c $(srcdir)/interp/eval.c $(srcdir)/interp/json.c \
	  $(srcdir)/interp/std.c -lm -o interp/ailang-lite-fuzz
.PHONY: interp-fuzz
CLEANFILES += interp/ailang-lite-fuzz

# Benchmark (bench/interp_bench.sh, `make bench`).
noinst_PROGRAMS += bench/interp_bench
bench_interp_bench_SOURCES = bench/interp_bench.c
EXTRA_DIST += bench/interp_bench.sh

# The man page, from --help and --version (help2man, at build time).
man1_MANS += interp/ailang-lite.1
CLEANFILES += interp/ailang-lite.1
# The footer is "World VERSION  DATE  AILANG-LITE(1)" like worldd(1)'s: the
# version line (AILANG-lite vX.Y.Z (ailang-lite: a C subset interpreter,
# ...)) is too long for a footer's source field and overran the date
# (tests/cli_man.sh), so help2man gets the name and the version by itself.
interp/ailang-lite.1: interp/ailang-lite$(EXEEXT) $(srcdir)/scripts/man-verbatim.sh Makefile
	$(AM_V_GEN)v=$$(./interp/ailang-lite$(EXEEXT) --version | sed -n '1s/^AILANG-lite v\([^ ]*\).*/\1/p') && \
	test -n "$$v" && \
	$(HELP2MAN) --no-info --no-discard-stderr --section=1 \
	  --name="the bundled AILANG-subset interpreter of World" --version-string="ailang-lite $$v" \
	  --source="World $(PACKAGE_VERSION)" --output=$@ ./interp/ailang-lite$(EXEEXT) && \
	WORLD_DOCDIR='$(docdir)' $(SHELL) $(srcdir)/scripts/man-verbatim.sh ./interp/ailang-lite$(EXEEXT) $@

# ailang-lite on PATH for publishers (issue 24 item 8): a relative symlink in
# bindir to the copy in pkglibexecdir, the one worldd runs
# (tests/cli_install.sh).
install-exec-hook: install-ailang-lite-link
uninstall-hook: uninstall-ailang-lite-link
install-ailang-lite-link:
	$(MKDIR_P) '$(DESTDIR)$(bindir)'
	rel=$$(realpath -m --relative-to='$(bindir)' '$(pkglibexecdir)/ailang-lite' 2>/dev/null) || \
	  rel='$(pkglibexecdir)/ailang-lite'; \
	rm -f '$(DESTDIR)$(bindir)/ailang-lite' && ln -s "$$rel" '$(DESTDIR)$(bindir)/ailang-lite'
uninstall-ailang-lite-link:
	rm -f '$(DESTDIR)$(bindir)/ailang-lite'
.PHONY: install-ailang-lite-link uninstall-ailang-lite-link
