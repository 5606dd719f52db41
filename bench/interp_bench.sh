#!/bin/sh
# bench/interp_bench.sh: wall time of ailang-lite (figures only, never a
# test): the median of `run` on the echo transition (goal: under 2 ms;
# upstream's Go interpreter takes tens of milliseconds to start), and of a
# transition that decodes and re-encodes a 1 MiB JSON argument, each next to
# the cost of spawning /bin/true measured in the same run. Env: top_builddir;
# INTERP_BENCH_RUNS overrides 200.
set -e
A="$top_builddir/interp/ailang-lite"
T="$top_builddir/bench/interp_bench"
runs=${INTERP_BENCH_RUNS:-200}
dir=$(mktemp -d "${TMPDIR:-/tmp}/world-interp-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"
mkdir -p quickstart
cat > quickstart/echo.ail <<'AIL'
module quickstart/echo
export func main(input: string) -> string { "{\"echo\":${input}}" }
AIL
cat > quickstart/reencode.ail <<'AIL'
module quickstart/reencode
import std/json (decode, encode)
export func main(input: string) -> string =
  match decode(input) { Ok(j) => encode(j), Err(e) => "{\"error\":\"bad input\"}" }
AIL
printf '%s' '"{\"a\":1}"' > echo.args
awk 'BEGIN { printf "{"; for (i = 0; i < 10500; i++) { if (i) printf ","; printf "\"key%d\":[\"%s\",%d,-1.5,true,null,{\"n\":\"x\\ny\"}]", i, "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopq", i } printf "}" }' > big.json
{ printf '"'; sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' big.json; printf '"'; } > big.args
echo "ailang-lite: $("$A" --version | head -n1)"
echo "1 MiB argument: $(wc -c < big.json) bytes of JSON, $(wc -c < big.args) bytes as a string literal"
med() { sed -n 's/.*median *\([0-9.]*\) ms.*/\1/p'; }
l1=$("$T" "spawn /bin/true (baseline)" "$runs" /bin/true); echo "$l1"
l2=$("$T" "run echo (input {\"a\":1})" "$runs" "$A" run --quiet --caps "" --entry main --args-file echo.args quickstart/echo.ail); echo "$l2"
l3=$("$T" "run echo with the 1 MiB argument" "$((runs / 4 + 1))" "$A" run --quiet --caps "" --entry main --args-file big.args quickstart/echo.ail); echo "$l3"
l4=$("$T" "run decode+encode of the 1 MiB argument" "$((runs / 4 + 1))" "$A" run --quiet --caps "" --entry main --args-file big.args quickstart/reencode.ail); echo "$l4"
l5=$("$T" "check echo" "$runs" "$A" check quickstart/echo.ail); echo "$l5"
b=$(echo "$l1" | med); e=$(echo "$l2" | med); r=$(echo "$l4" | med)
awk -v b="$b" -v e="$e" -v r="$r" 'BEGIN {
  printf "ratio: echo run / spawn of /bin/true = %.2f; 1 MiB decode+encode / echo run = %.1f\n", e / b, r / e
  printf "goal: echo run under 2 ms: %s (median %.3f ms)\n", (e < 2 ? "met" : "not met in this run"), e }'
