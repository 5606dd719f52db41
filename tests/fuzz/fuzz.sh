#!/bin/bash
# tests/fuzz/fuzz.sh [HARNESS...]: build every libFuzzer harness of
# tests/fuzz (clang -fsanitize=fuzzer,address,undefined, the real sources
# compiled into it) and run each for WORLD_FUZZ_SECONDS (default 30) from
# its checked-in seed corpus tests/fuzz/corpus/NAME (regression inputs of
# every crash found are there too), with tests/fuzz/NAME.dict when present.
# Any crash, leak, sanitizer report or timeout fails. Prints libFuzzer's
# final line (cov:, exec/s) per harness. `make fuzz` runs it for long
# (FUZZ_SECONDS, default 600 each) keeping what it finds in
# $top_builddir/tests/fuzz/found/NAME. Runs in the plain build's pass only
# (the harnesses carry their own sanitizers). The ailang-lite harness is
# interp/fuzz.c, run by tests/interp/fuzz.sh. tlog is what world-verify reads
# (tests/fuzz/fuzz_tlog.c). manifest, mcp, a2a and http link
# the build's libworld.a for everything but the files under test.
. "$top_srcdir/tests/tap.sh"
case "${AILANG_LITE_DIRECT:-}" in
  *-san) skip "the fuzz harnesses run in the plain build's pass" "fuzz"; done_testing; exit ;;
esac
if [ -n "${FUZZ_CC+set}" ] && [ -z "$FUZZ_CC" ]; then
  skip "configure found no clang that links -fsanitize=fuzzer (clang, libclang-rt-14-dev)" "fuzz"; done_testing; exit
fi
CC=${FUZZ_CC:-clang}
if ! command -v "$CC" >/dev/null 2>&1; then
  skip "clang not installed (configure --enable-fuzz checks for it)" "fuzz"; done_testing; exit
fi
secs=${WORLD_FUZZ_SECONDS:-30}
keep=${WORLD_FUZZ_KEEP:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/world-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
src=$top_srcdir
CFLAGS="-std=gnu11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I$src -DWORLD_AILANG_LITE_DEFAULT=\"/nonexistent/ailang-lite\""  # world-publish.c's default; the fuzzer never runs it
JANSSON=$(pkg-config --cflags --libs jansson 2>/dev/null || echo -ljansson)

# NAME: the sources it compiles in (besides tests/fuzz/fuzz_NAME.c)
declare -A SOURCES=(
  [canon]="common/canon.c common/error.c"
  [jschema]="common/jschema.c common/error.c"
  [frame]="supervisor/frame.c common/file.c common/error.c"
  [plan]="broker/plan.c common/canon.c common/error.c"
  [manifest]="cli/attended.c cli/output.c cli/default_interp.c cli/store_uri.c cli/flags.c cli/serve_exec.c common/jschema.c common/canon.c coordinator/catalog.c"
  [mcp]="daemon/mcp.c common/jschema.c coordinator/catalog.c"
  [a2a]="daemon/a2a.c daemon/a2a_push.c"
  [http]="daemon/server.c daemon/workers.c daemon/edge.c daemon/http.c daemon/reads.c daemon/mcp.c daemon/a2a.c daemon/replay_route.c common/jschema.c"
  [tlog]="tlog/tlog.c tlog/note.c tlog/checkpoint.c tlog/b64.c common/error.c"
)
# NAME: libraries it links besides jansson
declare -A LIBS=( [tlog]=-lcrypto )
# NAME: links the rest of the real code from the build's libworld.a (not
# instrumented: only the files above are under coverage and the sanitizers'
# checks; ASan still sees every heap block). Their sources stay as they are.
declare -A LIBWORLD=( [manifest]=1 [mcp]=1 [a2a]=1 [http]=1 )
# NAME: its dictionary when not tests/fuzz/NAME.dict
declare -A DICT=( [a2a]=mcp )
LIBWORLD_A=${FUZZ_LIBWORLD:-$top_builddir/libworld.a}
WORLD_LIBS=${FUZZ_WORLD_LIBS:--lseccomp -lcap -ljansson -lsqlite3 -lbsd -lmicrohttpd -lcrypto -lm}
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(canon jschema frame plan manifest mcp a2a http tlog)
# Every harness is built first, two at a time (the builds are most of the
# wall time that is not fuzzing), then each runs in turn.
build_one() {
  local n=$1 f srcs=() libs="$JANSSON ${LIBS[$n]:-}"
  for f in ${SOURCES[$n]}; do srcs+=("$src/$f"); done
  if [ -n "${LIBWORLD[$n]:-}" ]; then
    if [ ! -f "$LIBWORLD_A" ]; then echo "$LIBWORLD_A is not built" > "$work/$n.build"; return 1; fi
    libs="$LIBWORLD_A $WORLD_LIBS -lpthread"
  fi
  # shellcheck disable=SC2086
  "$CC" $CFLAGS "$src/tests/fuzz/fuzz_$n.c" "${srcs[@]}" $libs -o "$work/fuzz_$n" 2> "$work/$n.build"
}
running=0
for n in "${names[@]}"; do
  (build_one "$n"; echo $? > "$work/$n.built") &
  running=$((running + 1))
  if [ "$running" -ge 2 ]; then wait -n; running=$((running - 1)); fi
done
wait
for n in "${names[@]}"; do
  if [ "$(cat "$work/$n.built" 2>/dev/null)" != 0 ]; then
    sed 's/^/# /' "$work/$n.build"
    ok 1 "harness $n builds"
    continue
  fi
  ok 0 "harness $n builds"
  corpus=$work/corpus-$n
  [ -n "$keep" ] && corpus=$keep/$n
  mkdir -p "$corpus"
  cp "$src/tests/fuzz/corpus/$n/"* "$corpus/" 2>/dev/null
  dict=()
  dn=${DICT[$n]:-$n}
  [ -f "$src/tests/fuzz/$dn.dict" ] && dict=(-dict="$src/tests/fuzz/$dn.dict")
  (cd "$work" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     "./fuzz_$n" -max_total_time="$secs" -max_len=16384 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
     -artifact_prefix="$work/$n-" "${dict[@]}" "$corpus" > "$n.log" 2>&1)
  rc=$?
  is "$rc" 0 "fuzz $n ${secs}s: no crash, leak, sanitizer report or timeout"
  if [ "$rc" != 0 ]; then
    grep -m1 -A30 'ERROR\|runtime error\|deadly signal\|Timeout\|leak' "$work/$n.log" | sed 's/^/# /'
    for a in "$work/$n-"*; do [ -f "$a" ] && diag "artifact $n: $(od -An -c "$a" | head -5 | tr -s ' ')"; done
  fi
  if grep -q 'runtime error:\|ERROR: AddressSanitizer\|ERROR: LeakSanitizer' "$work/$n.log"; then ok 1 "fuzz $n: a sanitizer report in the log"; fi
  final=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$work/$n.log" | tail -n1)
  diag "fuzz $n: ${final:-no final line} (exec/s: $(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$work/$n.log" | grep -o '[0-9]*$'))"
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$n.log" | grep -o '[0-9]*$')
  [ "${runs:-0}" -gt 100 ]
  ok $? "fuzz $n executed more than 100 inputs (${runs:-0})"
done
done_testing
