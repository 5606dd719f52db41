# tlog/: the transparency log's library (issue 43): the Merkle tree and its
# proofs over stored hashes, C2SP signed notes (Ed25519) and tlog-checkpoint
# bodies. Pure: libcrypto only, no store, no I/O. In libworld.a for the
# store and the daemon, and as its own small archive for world-verify.
tlog_sources = tlog/tlog.c tlog/tlog.h tlog/note.c tlog/note.h tlog/checkpoint.c tlog/checkpoint.h \
	tlog/b64.c tlog/b64.h
libworld_a_SOURCES += $(tlog_sources)
noinst_LIBRARIES += tlog/libtlog.a
tlog_libtlog_a_SOURCES = $(tlog_sources) common/error.c common/error.h
tlog_libtlog_a_CFLAGS = $(AM_CFLAGS) $(CRYPTO_CFLAGS)

# RFC 6962 / RFC 9162 vectors, every size's proofs, signed notes, controls
check_PROGRAMS += tests/tlog/test_tlog
TESTS += tests/tlog/test_tlog
tests_tlog_test_tlog_SOURCES = tests/tlog/test_tlog.c tests/tlog/memlog.h
tests_tlog_test_tlog_CFLAGS = $(AM_CFLAGS) $(CRYPTO_CFLAGS)
tests_tlog_test_tlog_LDADD = tlog/libtlog.a tests/libtap.a $(CRYPTO_LIBS)
# the shell tests' driver of the library (tests/tlog/verify.sh, go_verify.sh)
check_PROGRAMS += tests/tlog/tlog_tool
tests_tlog_tlog_tool_SOURCES = tests/tlog/tlog_tool.c tests/tlog/memlog.h
tests_tlog_tlog_tool_CFLAGS = $(AM_CFLAGS) $(CRYPTO_CFLAGS)
tests_tlog_tlog_tool_LDADD = tlog/libtlog.a $(CRYPTO_LIBS)

