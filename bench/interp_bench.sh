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
"$T" "spawn /bin/true (baseline)" "$runs" /bin/true
"$T" "run echo (input {\"a\":1})" "$runs" "$A" run --quiet --caps "" --entry main --args-file echo.args quickstart/echo.ail
"$T" "run echo with the 1 MiB argument" "$((runs / 4 + 1))" "$A" run --quiet --caps "" --entry main --args-file big.args quickstart/echo.ail
"$T" "run decode+encode of the 1 MiB argument" "$((runs / 4 + 1))" "$A" run --quiet --caps "" --entry main --args-file big.args quickstart/reencode.ail
"$T" "check echo" "$runs" "$A" check quickstart/echo.ail
