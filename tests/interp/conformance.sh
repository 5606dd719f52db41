#!/bin/bash
# Conformance runner for ailang-lite: every X.ail in tests/interp/conformance
# is run as its sidecar files say (format: tests/interp/conformance/README.md)
# and its exit code, stdout and stderr are compared. The working directory is
# the conformance folder, so `module X` matches the file X.ail.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/interp/conformance-lib.sh"
A=$AILANG_LITE_DIRECT
dir="$top_srcdir/tests/interp/conformance"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$dir" || bail "cd $dir"
n=0
for src in *.ail; do
  [ -e "$src" ] || continue
  x=${src%.ail}
  n=$((n + 1))
  conf_prepare "$x" "$work"
  want_code=0
  [ -f "$x.code" ] && want_code=$(head -n1 "$x.code")
  env "${envv[@]}" timeout 20 "$A" "${words[@]}" "${argv[@]}" "$src" > "$work/out" 2> "$work/err"
  rc=$?
  is "$rc" "$want_code" "$x ($cmd): exit code"
  if [ "$rc" != "$want_code" ]; then diag "stderr: $(head -c 500 "$work/err")"; fi
  if [ -f "$x.out" ]; then
    if cmp -s "$work/out" "$x.out"; then ok 0 "$x: stdout"; else ok 1 "$x: stdout"; diag "got:  $(head -c 800 "$work/out")"; diag "want: $(head -c 800 "$x.out")"; fi
  fi
  if [ -f "$x.err" ]; then
    like "$(cat "$work/err")" "$(head -n1 "$x.err")" "$x: stderr"
  elif [ "$want_code" = 0 ]; then
    is "$(cat "$work/err")" "" "$x: no stderr"
  fi
done
[ "$n" -gt 0 ] || bail "no conformance programs in $dir"
diag "$n conformance programs"
done_testing
