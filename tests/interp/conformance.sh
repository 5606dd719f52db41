#!/bin/bash
# Conformance runner for ailang-lite: every X.ail in tests/interp/conformance
# is run as its sidecar files say (format: tests/interp/conformance/README.md)
# and its exit code, stdout and stderr are compared. The working directory is
# the conformance folder, so `module X` matches the file X.ail.
. "$top_srcdir/tests/tap.sh"
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
  cmd=run
  [ -f "$x.cmd" ] && cmd=$(head -n1 "$x.cmd")
  read -r -a words <<< "$cmd"
  argv=()
  if [ -f "$x.args" ]; then
    # the input JSON, passed the way capsules do: one JSON string literal
    # (backslash, quote and tab escaped; lines joined with \n; the final
    # newline of the file dropped)
    { printf '"'; sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/\t/\\t/g' "$x.args" | awk 'NR>1{printf "\\n"} {printf "%s", $0}'; printf '"'; } > "$work/args.json"
    argv=(--args-file "$work/args.json")
  elif [ -f "$x.argsfile" ]; then
    argv=(--args-file "$x.argsfile")
  fi
  envv=()
  if [ -f "$x.env" ]; then
    while IFS= read -r line; do [ -n "$line" ] && envv+=("$line"); done < "$x.env"
  fi
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
