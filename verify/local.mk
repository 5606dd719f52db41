# verify/: world-verify, the offline verifier of the transparency log
# (issue 43; docs/provenance.md). It links tlog/'s own archive and libcrypto
# only -- no store, no jansson, no SQLite -- so it is small and runs where
# World is not installed.
bin_PROGRAMS += verify/world-verify
verify_world_verify_SOURCES = verify/world-verify.c
verify_world_verify_CFLAGS = $(AM_CFLAGS) $(CRYPTO_CFLAGS)
verify_world_verify_LDADD = tlog/libtlog.a $(CRYPTO_LIBS)

# The man page, from --help and --version (help2man, at build time), as
# world-publish's (cli/local.mk).
man1_MANS += verify/world-verify.1
CLEANFILES += verify/world-verify.1
verify/world-verify.1: verify/world-verify$(EXEEXT) $(srcdir)/scripts/man-verbatim.sh Makefile
	$(AM_V_GEN)$(HELP2MAN) --no-info --section=1 \
	  --name="verify World's transparency log offline (checkpoints, inclusion, consistency)" \
	  --output=$@ ./verify/world-verify$(EXEEXT) && \
	WORLD_DOCDIR='$(docdir)' $(SHELL) $(srcdir)/scripts/man-verbatim.sh ./verify/world-verify$(EXEEXT) $@

# world-verify against the library and against Go's own sumdb/note and
# sumdb/tlog (both directions; skipped without go)
TESTS += tests/tlog/verify.sh tests/tlog/go_verify.sh
EXTRA_DIST += tests/tlog/verify.sh tests/tlog/go_verify.sh tests/tlog/go/verify.go
