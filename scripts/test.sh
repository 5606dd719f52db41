#!/bin/sh
# scripts/test.sh: build and run the whole test suite twice: once with
# -Wall -Wextra -Werror -O2, once under AddressSanitizer+UBSan. Ends with
# one line "N passed, N failed, N skipped" over both runs; exits non-zero on
# any failure. After the plain build's tests, `make bench-smoke` runs every
# benchmark once with tiny sizes: a benchmark that no longer runs fails the
# run (its figures are printed, never judged). Before the closing line,
# tests/failures names each failed test, its diagnostics and its log.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh"
"$top/scripts/install-test-deps.sh"
status=0
"$top/scripts/build.sh" "$top/build/check" --enable-test-hooks
( cd "$top/build/check" && make -s -j"$(nproc)" check ) || status=1
echo "== plain build: $("$top/tests/summarize" "$top/build/check" || true)"
if ( cd "$top/build/check" && make -s bench-smoke >bench-smoke.log 2>&1 ); then
  echo "== bench-smoke: every benchmark ran (build/check/bench-smoke.log)"
else
  echo "== bench-smoke: a benchmark failed (build/check/bench-smoke.log):"; tail -n 20 "$top/build/check/bench-smoke.log"
  status=1
fi
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1; export ASAN_OPTIONS
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1; export UBSAN_OPTIONS
WORLD_CFLAGS="-O1 -g" "$top/scripts/build.sh" "$top/build/asan" --enable-sanitizers --enable-test-hooks
( cd "$top/build/asan" && make -s -j"$(nproc)" check ) || status=1
echo "== sanitizer build: $("$top/tests/summarize" "$top/build/asan" || true)"
"$top/tests/failures" "$top/build/check" "$top/build/asan"
"$top/tests/summarize" "$top/build/check" "$top/build/asan" || status=1
exit $status
