#!/bin/bash
# ailang-lite robustness: deep recursion, runaway loops, huge strings,
# 1 MiB arguments, deeply nested JSON and pathological sources all end in
# one clean `Error: CODE ...` line (or a correct result), never a crash or a
# hang. Heap-cap cases run with AILANG_LITE_HEAP_MB=32 to stay quick.
. "$top_srcdir/tests/tap.sh"
A=$AILANG_LITE_DIRECT
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || bail "cd $work"

# one clean error line, the given code, exit 1, no crash
clean_error() { # rc err code name
  is "$1" 1 "$4: exits 1"
  like "$2" "^Error: $3 at [^ ]+:[0-9]+:[0-9]+: " "$4: reports $3"
  is "$(printf '%s\n' "$2" | wc -l)" 1 "$4: exactly one stderr line"
}

cat > deep.ail <<'AIL'
module deep
func down(n: int) -> int = if n == 0 then 0 else 1 + down(n - 1)
export func main(input: string) -> string = show(down(100000000))
AIL
run_capture out err rc timeout 60 "$A" run --args-json '""' deep.ail
clean_error "$rc" "$err" RT_STACK "unbounded non-tail recursion"

cat > recurse.ail <<'AIL'
module recurse
func down(n: int) -> int = if n == 0 then 0 else 1 + down(n - 1)
func count(n: int, acc: int) -> int = if n == 0 then acc else count(n - 1, acc + 1)
export func main(input: string) -> string = "${show(down(5000))} ${show(count(1000000, 0))}"
AIL
run_capture out err rc timeout 60 "$A" run --args-json '""' recurse.ail
is "$out" "5000 1000000" "5000 nested calls and a 1,000,000-step tail-recursive loop run"

cat > spin.ail <<'AIL'
module spin
func spin(n: int) -> int = spin(n + 1)
export func main(input: string) -> string = show(spin(0))
AIL
run_capture out err rc env AILANG_LITE_HEAP_MB=32 timeout 60 "$A" run --args-json '""' spin.ail
clean_error "$rc" "$err" RT_HEAP "an endless loop stops at the heap cap"
like "$err" "spin.ail:2:" "the heap error points into the loop"

cat > grow.ail <<'AIL'
module grow
func grow(s: string) -> string = grow(s ++ s)
export func main(input: string) -> string = grow("0123456789")
AIL
run_capture out err rc env AILANG_LITE_HEAP_MB=32 timeout 60 "$A" run --args-json '""' grow.ail
clean_error "$rc" "$err" RT_HEAP "a doubling string stops at the heap cap"

cat > biglist.ail <<'AIL'
module biglist
import std/list (foldl, map, reverse, length)
func upto(n: int, acc: [int]) -> [int] = if n == 0 then acc else upto(n - 1, n :: acc)
export func main(input: string) -> string {
  let xs = upto(200000, []);
  show((length(xs), foldl(\a x. a + x, 0, map(\x. x * 2, reverse(xs))), xs == reverse(reverse(xs))))
}
AIL
run_capture out err rc timeout 60 "$A" run --args-json '""' biglist.ail
is "$out" "(200000, 40000200000, true)" "a 200,000-element list through map, foldl, reverse and =="

# 1 MiB argument: decode and re-encode gives back the same bytes
cat > rt.ail <<'AIL'
module rt
import std/json (decode, encode)
export func main(input: string) -> string = match decode(input) { Ok(j) => encode(j), Err(e) => "ERR ${e}" }
AIL
awk 'BEGIN { printf "{"; for (i = 0; i < 10500; i++) { if (i) printf ","; printf "\"key%d\":[\"%s\",%d,-1.5,true,null,{\"n\":\"\\u00e9\\n\"}]", i, "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopq", i } printf "}" }' > big.json
size=$(wc -c < big.json)
[ "$size" -gt 1048576 ]; ok $? "test input is over 1 MiB ($size bytes)"
{ printf '"'; sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' big.json; printf '"'; } > big.args
run_capture out err rc timeout 60 "$A" run --args-file big.args rt.ail
is "$rc" 0 "1 MiB argument decodes and re-encodes"
is "$(printf '%s' "$out" | sed 's/\\u00e9/é/g' | cksum)" "$(sed 's/\\u00e9/é/g' big.json | cksum)" "re-encoded 1 MiB JSON equals the input (é printed raw)"
cat > echo.ail <<'AIL'
module echo
export func main(input: string) -> string { "{\"echo\":${input}}" }
AIL
run_capture out err rc timeout 60 "$A" run --args-file big.args echo.ail
is "${#out}" "$((size + 9))" "1 MiB argument through the echo transition"

# deeply nested JSON: decode refuses it cleanly
awk 'BEGIN { printf "\""; for (i = 0; i < 200000; i++) printf "["; printf "\"" }' > nest.args
run_capture out err rc timeout 60 "$A" run --args-file nest.args rt.ail
is "$rc" 0 "200,000 nested brackets: the program runs"
like "$out" "^ERR nesting too deep" "decode returns Err for too-deep JSON"

# pathological sources
awk 'BEGIN { printf "module p1\nexport func main() -> string = show("; for (i = 0; i < 100000; i++) printf "("; printf "1"; for (i = 0; i < 100000; i++) printf ")"; printf ")\n" }' > p1.ail
run_capture out err rc timeout 60 "$A" check p1.ail
clean_error "$rc" "$err" PAR_NESTING_TOO_DEEP "100,000 nested parentheses"
awk 'BEGIN { printf "module p2\nexport func main() -> string = "; for (i = 0; i < 5000; i++) printf "\"${"; printf "1"; for (i = 0; i < 5000; i++) printf "}\""; printf "\n" }' > p2.ail
run_capture out err rc timeout 60 "$A" check p2.ail
clean_error "$rc" "$err" PAR_NESTING_TOO_DEEP "5,000 nested interpolations"
awk 'BEGIN { printf "module p3\nexport func main() -> string = \"x\""; for (i = 0; i < 100000; i++) printf " ++ \"x\""; printf "\n" }' > p3.ail
run_capture out err rc timeout 60 "$A" check p3.ail
clean_error "$rc" "$err" PAR_NESTING_TOO_DEEP "100,000 chained right-associative ++ (under the 1 MiB source cap)"
awk 'BEGIN { printf "module p4\nexport func main() -> int = 0"; for (i = 0; i < 200000; i++) printf " + 1"; printf "\n" }' > p4.ail
run_capture out err rc timeout 60 "$A" check p4.ail
clean_error "$rc" "$err" PAR_NESTING_TOO_DEEP "200,000 chained left-associative +"
awk 'BEGIN { printf "module p4b\nexport func main() -> int = 0"; for (i = 0; i < 900; i++) printf " + 1"; printf "\n" }' > p4b.ail
run_capture out err rc timeout 60 "$A" run p4b.ail
is "$out" "900" "a chain of 900 + runs"
head -c 5000000 /dev/zero | tr '\0' ' ' > p5.ail
run_capture out err rc timeout 60 "$A" check p5.ail
clean_error "$rc" "$err" LDR_READ "a source over the size limit"
printf 'module p6\nexport func main() -> string = "abc\n' > p6.ail
run_capture out err rc timeout 60 "$A" check p6.ail
clean_error "$rc" "$err" PAR_UNTERMINATED_STRING "unterminated string"
printf 'module p7\nexport func main() -> string = "a\0b"\n' > p7.ail
run_capture out err rc timeout 60 "$A" check p7.ail
clean_error "$rc" "$err" PAR_UNEXPECTED_CHAR "NUL byte in the source"
head -c 20000 /dev/urandom > p8.ail
run_capture out err rc timeout 60 "$A" check p8.ail
is "$rc" 1 "random bytes are refused with exit 1"
like "$err" "^Error: PAR_[A-Z_]+ at p8.ail:" "random bytes give a PAR_ error"
printf 'module p9\nexport func main() -> int = 9223372036854775807 + 1\n' > p9.ail
run_capture out err rc timeout 60 "$A" run p9.ail
clean_error "$rc" "$err" RT_OVERFLOW "integer overflow"
printf 'module p10\nexport func main() -> int = 99999999999999999999\n' > p10.ail
run_capture out err rc timeout 60 "$A" check p10.ail
clean_error "$rc" "$err" PAR_BAD_NUMBER "integer literal out of range"
awk 'BEGIN { printf "module p11\n"; for (i = 0; i < 30000; i++) printf "func f%d() -> int = %d\n", i, i; printf "export func main() -> int = f29999() + f1()\n" }' > p11.ail
run_capture out err rc timeout 60 "$A" run p11.ail
is "$out" "30000" "a source of 30,000 functions (about 0.8 MiB) loads and runs"
awk 'BEGIN { printf "module p12\nexport func main() -> int {\n"; for (i = 0; i < 5000; i++) printf "  let x%d = %d;\n", i, i; printf "  x0\n}\n" }' > p12.ail
run_capture out err rc timeout 60 "$A" check p12.ail
clean_error "$rc" "$err" PAR_NESTING_TOO_DEEP "a block of 5,000 statements"
awk 'BEGIN { printf "module p13\nexport func main() -> int = 1\nfunc r() = {"; for (i = 0; i < 50000; i++) printf "a%d: 1, ", i; printf "z: 2}\n" }' > p13.ail
run_capture out err rc timeout 60 "$A" check p13.ail
clean_error "$rc" "$err" PAR_TOO_LARGE "a record literal of 50,000 fields"
awk 'BEGIN { printf "module p14\nexport func main() -> int = 1\nfunc r() = ["; for (i = 0; i < 100000; i++) printf "%d, ", i; printf "0]\n" }' > p14.ail
run_capture out err rc timeout 60 "$A" check --library p14.ail
is "$rc" 0 "a list literal of 100,000 items checks"
done_testing
