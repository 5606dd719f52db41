#!/bin/bash
# One verb per job (issue 12): run and its alias invoke, check and its alias
# source check give the same output, one --summary format and the same
# input rules; errors name the user's file (not host/capsule/main.ail), once,
# on one line; one source-size cap (the figure of --help and
# docs/ailang-lite.md) for run, check and ailang-lite itself; a CPU-time
# rlimit kill says so; checks refuse what cannot run. Each with a control.
. "$top_srcdir/tests/tap.sh"
T=$(mktemp -d /tmp/world-cli-run.XXXXXX)
trap 'rm -rf "$T"' EXIT
W=$WORLDD
A=$AILANG_LITE
FIX="$top_builddir/tests/capsule/fixture"
cat > "$T/echo.ail" <<'AIL'
module echo
export func main(input: string) -> string { "{\"echo\":${input}}" }
AIL
printf 'module bad\nexport func main(input: string) -> string { nope }\n' > "$T/bad.ail"
printf 'module lib\nexport func helper(input: string) -> string { input }\n' > "$T/nomain.ail"
printf 'spin\n' > "$T/spin.ail"
printf 'echo\n' > "$T/fixecho.ail"

# ---- 3. one verb per job ------------------------------------------------------
run_capture o1 e1 r1 "$W" run --ailang-bin "$A" --source "$T/echo.ail" --input '{"m":1}'
run_capture o2 e2 r2 "$W" invoke --ailang-bin "$A" --source "$T/echo.ail" --input '{"m":1}'
is "$r1 $o1" '0 {"echo":{"m":1}}' "run prints the output object"
is "$r2 $o2" "$r1 $o1" "invoke (alias) gives the same output and exit code"
run_capture o1 e1 r1 "$W" run --ailang-bin "$A" --source "$T/echo.ail"
is "$o1" '{"echo":{}}' "the input defaults to {} (the one input rule of both)"
run_capture o1 e1 r1 "$W" run --ailang-bin "$A" --source "$T/echo.ail" --input '{"m":1}' --input-file "$T/x"
is "$r1" 2 "--input with --input-file: usage"
run_capture o1 e1 r1 "$W" check --ailang-bin "$A" --source "$T/echo.ail"
run_capture o2 e2 r2 "$W" source check --ailang-bin "$A" --source "$T/echo.ail"
is "$r1 $o1" "0 accepted: $T/echo.ail" "check prints accepted: FILE"
is "$r2 $o2" "$r1 $o1" "source check (alias) prints the same line"
for v in run invoke; do
  run_capture o e r "$W" $v --ailang-bin "$A" --source "$T/echo.ail" --phase-ms 500
  is "$r" 2 "$v: the old --phase-ms is gone (one timeout flag, --timeout-ms)"
done
run_capture o e r "$W" run --ailang-bin "$FIX" --source "$T/spin.ail" --timeout-ms 600
is "$r" 11 "run --timeout-ms sets the deadline"
# one --summary format for every verb
run_capture o e r "$W" run --ailang-bin "$A" --source "$T/echo.ail" --summary
like "$e" "supervisor +deadlines plan 4000 ms" "run --summary: the supervisor's limits"
like "$e" "applied +" "run --summary: what was applied"
like "$e" "worldd run: capsule profile transition; interpreter sha256:[0-9a-f]{64}; [0-9]+ ms; capsule stderr 0 bytes" "run --summary: the last line"
run_capture o e r "$W" check --ailang-bin "$A" --source "$T/echo.ail" --summary
like "$e" "supervisor +deadlines plan 4000 ms" "check --summary: the same limits block"
like "$e" "worldd check: capsule profile source-check; interpreter sha256:[0-9a-f]{64}; [0-9]+ ms" "check --summary: the same last line"
run_capture o e r "$W" run --ailang-bin "$FIX" --source "$T/fixecho.ail" --input '{}' --profile tool-run --summary
like "$e" "worldd run: capsule profile tool-run; interpreter sha256:" "tool-run --summary: the same last line"

# ---- 4. errors name the user's file, once, on one line ------------------------
run_capture o e r "$W" run --ailang-bin "$A" --source "$T/bad.ail"
is "$r" 14 "an undefined name fails the run"
like "$e" "^worldd run: interpreter exited with status 1 in the pure run phase: Error: TC_UNDEFINED_001 at $T/bad.ail:2:" "run: the error names the file given"
is "$(printf '%s\n' "$e" | wc -l)" 1 "run: one line"
run_capture o e r "$W" check --ailang-bin "$A" --source "$T/bad.ail"
is "$r" 19 "check refuses it"
is "$e" "worldd check: source refused: Error: TC_UNDEFINED_001 at $T/bad.ail:2:45: undefined name 'nope'" "check: one line naming the file given, printed once"
unlike "$e" "host/capsule/main.ail" "no capsule file name"
# control: inside the capsule the interpreter names the staged file
mkdir -p "$T/root/host/capsule" && cp "$T/bad.ail" "$T/root/host/capsule/main.ail"
run_capture o e r sh -c "cd '$T/root' && AILANG_RELAX_MODULES=1 '$A' check host/capsule/main.ail"
like "$e" "host/capsule/main.ail:2:" "control: the interpreter itself says host/capsule/main.ail"
run_capture o e r "$W" check --ailang-bin "$A" --source - < "$T/bad.ail"
like "$e" "^worldd check: source refused: Error: TC_UNDEFINED_001 at \(stdin\):2:" "--source -: diagnostics say (stdin)"
# --show-stderr copies the capsule's stderr (mapped the same way)
printf 'fail\n' > "$T/fail.ail"
run_capture o e r "$W" run --ailang-bin "$FIX" --source "$T/fail.ail"
is "$(printf '%s\n' "$e" | wc -l)" 1 "control: without --show-stderr, one error line"
run_capture o e r "$W" run --ailang-bin "$FIX" --source "$T/fail.ail" --show-stderr
is "$(printf '%s\n' "$e" | head -n1)" "Error: RT001 boom" "--show-stderr prints the capsule's stderr first"
is "$(printf '%s\n' "$e" | wc -l)" 2 "... then the one error line"

# ---- 6. limits that agree and explain themselves ------------------------------
cap=$("$W" run --help | sed -n 's/.*at most \([0-9]*\) bytes (1 MiB).*/\1/p')
is "$cap" 1048576 "worldd run --help states the source cap"
is "$("$W" check --help | sed -n 's/.*at most \([0-9]*\) bytes (1 MiB).*/\1/p')" "$cap" "worldd check --help states the same"
like "$("$A" --help)" "at most $cap bytes \(1 MiB\)" "ailang-lite --help states the same"
like "$(cat "$top_srcdir/docs/ailang-lite.md")" "\| source \| 1 MiB \($cap bytes\)" "docs/ailang-lite.md states the same"
mksrc() { # BYTES FILE: a valid source of exactly BYTES bytes (a long comment)
  printf 'module %s\nexport func main(input: string) -> string { input }\n--' "$(basename "$2" .ail)" > "$2"
  local have; have=$(stat -c %s "$2")
  { head -c $(( $1 - have - 1 )) /dev/zero | tr '\0' 'x'; printf '\n'; } >> "$2"
}
mksrc "$cap" "$T/big.ail"
mksrc $((cap + 1)) "$T/over.ail"
is "$(stat -c %s "$T/big.ail") $(stat -c %s "$T/over.ail")" "$cap $((cap + 1))" "sources of the cap and one byte more"
run_capture o e r "$W" run --ailang-bin "$A" --source "$T/big.ail" --input '{}'
is "$r $o" "0 {}" "control: a source of exactly the cap runs"
for v in run check; do
  run_capture o e r "$W" $v --ailang-bin "$A" --source "$T/over.ail"
  is "$r" 3 "$v: a source one byte over the cap: exit 3"
  like "$e" "over the $cap-byte cap" "... naming the cap"
done
run_capture o e r sh -c "cd '$T' && '$A' check --library over.ail"
like "$e" "LDR_READ" "ailang-lite refuses it too (same cap)"
run_capture o e r sh -c "cd '$T' && '$A' check big.ail"
is "$r" 0 "control: ailang-lite checks the source of exactly the cap"
# a CPU-time rlimit kill says so (a wall deadline far above it)
run_capture o e r "$W" run --ailang-bin "$FIX" --source "$T/spin.ail" --timeout-ms 120000
is "$r" 14 "a CPU-bound run past the profile's CPU limit: exit 14"
like "$e" "CPU time limit \(5 s\) exceeded" "... says CPU time limit (5 s) exceeded"
unlike "$e" "signal 24" "... not killed by signal 24"
like "$("$W" run --help)" "--timeout-ms does not raise it" "run --help says why --timeout-ms does not raise the CPU limit"

# ---- 8. checks that predict runs ----------------------------------------------
run_capture o e r "$W" check --ailang-bin "$A" --source "$T/nomain.ail"
is "$r" 19 "worldd check refuses a module without main"
like "$e" "CHK_NO_MAIN at $T/nomain.ail:1:8" "... with its code, naming the file"
run_capture o e r "$W" run --ailang-bin "$A" --source "$T/nomain.ail"
is "$r" 14 "control: that module indeed cannot run"
printf 'module m0\nexport func main() -> string { "x" }\n' > "$T/m0.ail"
run_capture o e r "$W" check --ailang-bin "$A" --source "$T/m0.ail"
like "$e" "CHK_MAIN_ARITY" "a main without a parameter is refused (CHK_MAIN_ARITY)"
printf 'module empty\n' > "$T/empty.ail"
run_capture o e r "$W" check --ailang-bin "$A" --source "$T/empty.ail"
like "$e" "CHK_EMPTY" "an empty module is refused (CHK_EMPTY)"
done_testing
