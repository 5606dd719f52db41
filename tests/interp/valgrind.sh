#!/bin/bash
# Run the conformance programs under valgrind
# memcheck (dynamically linked copy interp/ailang-lite-dyn, so that malloc is
# tracked). Any memory error or leak fails. Skipped when valgrind is not
# installed and in the sanitizer build (valgrind cannot run ASan binaries).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/interp/conformance-lib.sh"
case "$AILANG_LITE_DIRECT" in
  *-san) skip "valgrind runs in the plain build's pass" "valgrind"; done_testing; exit ;;
esac
if ! command -v valgrind >/dev/null 2>&1; then
  skip "valgrind not installed" "valgrind"; done_testing; exit
fi
A="$top_builddir/interp/ailang-lite-dyn"
[ -x "$A" ] || bail "missing $A"
dir="$top_srcdir/tests/interp/conformance"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$dir" || bail "cd $dir"
# valgrind costs about a second per run: by default an evenly spread
# sample of at most 30 programs; WORLD_LONG_TESTS=1 runs them all.
all=(*.ail)
step=1
if [ -z "$WORLD_LONG_TESTS" ] && [ "${#all[@]}" -gt 30 ]; then step=$(( (${#all[@]} + 29) / 30 )); fi
for ((i = 0; i < ${#all[@]}; i += step)); do
  src=${all[$i]}
  x=${src%.ail}
  conf_prepare "$x" "$work"
  env "${envv[@]}" valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
    "$A" "${words[@]}" "${argv[@]}" "$src" > /dev/null 2> "$work/err"
  rc=$?
  [ "$rc" != 99 ] && ! grep -q '^==[0-9]*==' "$work/err"
  ok $? "$x: valgrind reports nothing"
  [ "$rc" = 99 ] && sed 's/^/# /' "$work/err" | head -20
done
# the listing commands: builtins (both forms) and iface
for words in "builtins --json" "builtins" "iface $top_srcdir/packages/se-tools/ailang-check.ail"; do
  # shellcheck disable=SC2086
  valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
    "$A" $words > /dev/null 2> "$work/err"
  rc=$?
  [ "$rc" != 99 ] && ! grep -q '^==[0-9]*==' "$work/err"
  ok $? "ailang-lite ${words%% /*}: valgrind reports nothing"
  [ "$rc" = 99 ] && sed 's/^/# /' "$work/err" | head -20
done
done_testing
