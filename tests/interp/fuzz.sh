#!/bin/bash
# Fuzz ailang-lite's lexer, parser, loader, checker and JSON codec with
# libFuzzer (clang -fsanitize=fuzzer,address,undefined) for a bounded time
# (WORLD_FUZZ_SECONDS, default 30) starting from the committed corpus
# tests/interp/fuzz-corpus. Any crash, sanitizer report, leak or timeout
# fails the test. Runs in the plain build's pass only (the fuzz binary
# carries its own sanitizers).
. "$top_srcdir/tests/tap.sh"
case "$AILANG_LITE_DIRECT" in
  *-san) skip "the fuzz target runs in the plain build's pass" "fuzz ailang-lite"; done_testing; exit ;;
esac
CLANG=${CLANG:-clang}
if ! command -v "$CLANG" >/dev/null 2>&1; then
  skip "clang not installed" "fuzz ailang-lite"; done_testing; exit
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src="$top_srcdir/interp"
if ! "$CLANG" -std=gnu11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=undefined -I"$top_srcdir" \
    "$src/fuzz.c" "$src/lex.c" "$src/parse.c" "$src/value.c" "$src/eval.c" "$src/json.c" "$src/std.c" \
    -lm -o "$work/fuzz" 2> "$work/build.log"; then
  if grep -q -- '-lFuzzer\|libclang_rt.fuzzer\|fuzzer' "$work/build.log" && ! grep -q 'error:.*\.c:' "$work/build.log"; then
    skip "clang cannot link libFuzzer here" "fuzz ailang-lite"; done_testing; exit
  fi
  cat "$work/build.log" | sed 's/^/# /'
  ok 1 "fuzz target builds"
  done_testing; exit
fi
ok 0 "fuzz target builds"
mkdir "$work/corpus"
cp "$top_srcdir/tests/interp/fuzz-corpus/"* "$work/corpus/"
secs=${WORLD_FUZZ_SECONDS:-30}
(cd "$work" && ASAN_OPTIONS=detect_leaks=1 ./fuzz -max_total_time="$secs" -max_len=8192 -timeout=10 \
   -rss_limit_mb=2048 -print_final_stats=1 -dict="$top_srcdir/tests/interp/fuzz.dict" corpus > fuzz.log 2>&1)
rc=$?
is "$rc" 0 "libFuzzer ran ${secs}s over lexer, parser, check and JSON without a crash"
[ "$rc" = 0 ] || tail -n 40 "$work/fuzz.log" | sed 's/^/# /'
runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/fuzz.log" | grep -o '[0-9]*$')
diag "executed units: ${runs:-?}"
[ "${runs:-0}" -gt 100 ]
ok $? "the fuzzer executed more than 100 inputs"
done_testing
