# tests/fuzz: libFuzzer harnesses, one per surface a hostile agent or
# interpreter reaches (docs/HACKING.md, "Fuzzing"). tests/fuzz/fuzz.sh
# builds each with $(FUZZ_CC) (configure: clang that links
# -fsanitize=fuzzer) and runs it WORLD_FUZZ_SECONDS (30) in `make check`;
# `make fuzz` runs each FUZZ_SECONDS (600), keeping what it finds in
# tests/fuzz/found/NAME of the build tree.
TESTS += tests/fuzz/fuzz.sh
EXTRA_DIST += tests/fuzz
AM_TESTS_ENVIRONMENT += FUZZ_CC='$(FUZZ_CC)'; export FUZZ_CC; FUZZ_WORLD_LIBS='$(WORLD_DEP_LIBS)'; export FUZZ_WORLD_LIBS;
FUZZ_SECONDS = 600
fuzz: libworld.a
	@mkdir -p tests/fuzz/found
	@$(AM_TESTS_ENVIRONMENT) WORLD_FUZZ_SECONDS=$(FUZZ_SECONDS) WORLD_FUZZ_KEEP='$(abs_top_builddir)/tests/fuzz/found' \
	  bash $(srcdir)/tests/fuzz/fuzz.sh
.PHONY: fuzz
