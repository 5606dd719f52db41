#!/bin/bash
# ailang-lite iface FILE: after the checks of `check`, one compact JSON line
# with the module's interface (what the Ailang.CLI handler's `iface` op
# serves, and how a publisher can see that `main` takes one argument).
. "$top_srcdir/tests/tap.sh"
A=$AILANG_LITE_DIRECT
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || bail "cd $work"
mkdir -p lib
cat > lib/shapes.ail <<'AIL'
module lib/shapes
import std/json (encode, js)
import std/list (map)
type Shape = Circle(int) | Rect(int, int) | Dot
export pure func area(s: Shape) -> int
tests [(Dot, 0)]
{ match s { Circle(r) => 3 * r * r, Rect(w, h) => w * h, Dot => 0 } }
func helper(a: int, b: int) -> int = a + b
export func main(input: string) -> string { encode(js(input)) }
AIL
run_capture out err rc "$A" iface lib/shapes.ail
is "$rc" 0 "iface exits 0"
is "$err" "" "nothing on stderr"
is "$out" '{"file":"lib/shapes.ail","module":"lib/shapes","imports":["std/json","std/list"],"exports":[{"name":"area","params":["s"],"arity":1,"pure":true,"tests":1},{"name":"main","params":["input"],"arity":1,"pure":false,"tests":0}],"constructors":[{"name":"Circle","arity":1},{"name":"Rect","arity":2},{"name":"Dot","arity":0}]}' \
  "the interface: module, imports, exported functions only, constructors"
printf '%s\n' "$out" | python3 -c 'import json,sys; json.load(sys.stdin)'
ok $? "the interface is JSON"
unlike "$out" 'helper' "a function that is not exported is not listed"
# control: exporting it lists it
sed 's/^func helper/export func helper/' lib/shapes.ail > lib/shapes2.ail
sed -i 's|^module lib/shapes$|module lib/shapes2|' lib/shapes2.ail
run_capture out err rc "$A" iface lib/shapes2.ail
like "$out" '"name":"helper","params":\["a","b"\],"arity":2' "control: once exported, helper is listed with its parameters"

printf 'export func main() -> string { "x" }\n' > nomodule.ail
run_capture out err rc "$A" iface nomodule.ail
like "$out" '^\{"file":"nomodule.ail","module":null,"imports":\[\],"exports":\[\{"name":"main","params":\[\],"arity":0' "no module line: module null; a main of no parameters has arity 0"

printf 'export func main(input: string) -> string { nope }\n' > bad.ail
run_capture out err rc "$A" iface bad.ail
is "$rc" 1 "a file that does not check exits 1"
is "$out" "" "nothing on stdout for a refused file"
like "$err" '^Error: TC_UNDEFINED_001 at bad.ail:1:' "the refusal is the check's Error line"
printf 'import world/secret (x)\nexport func main(input: string) -> string { input }\n' > ldr.ail
run_capture out err rc "$A" iface ldr.ail
like "$err" 'LDR001: module not found: world/secret' "a missing module is LDR001"

run_capture out err rc "$A" iface
is "$rc" 2 "iface without a file exits 2"
run_capture out err rc "$A" iface --bogus lib/shapes.ail
is "$rc" 2 "an unknown flag exits 2"
run_capture out err rc "$A" iface lib/shapes.ail nomodule.ail
is "$rc" 2 "two files exit 2"
done_testing
