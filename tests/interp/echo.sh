#!/bin/bash
# ailang-lite command line: the echo transition of docs/design.md §2/§11 through
# --args-file and --args-json (also from stdin), --version, flag errors
# (exit 2), module/path agreement (MOD010) and AILANG_RELAX_MODULES,
# missing modules (LDR001), missing entry, argument decoding errors.
. "$top_srcdir/tests/tap.sh"
A=$AILANG_LITE_DIRECT
S=$AILANG_LITE
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || bail "cd $work"
mkdir -p quickstart host/capsule
cat > quickstart/echo.ail <<'AIL'
module quickstart/echo
export func main(input: string) -> string { "{\"echo\":${input}}" }
AIL
printf '%s' '"{\"a\":1}"' > args.json

run_capture out err rc "$A" --version
is "$rc" 0 "--version exits 0"
like "$(printf '%s\n' "$out" | head -n1)" '^AILANG-lite v[0-9]+\.[0-9]+\.[0-9]+' "first line names AILANG-lite (not upstream)"

run_capture out err rc "$A" run --quiet --caps "" --entry main --args-file args.json quickstart/echo.ail
is "$out" '{"echo":{"a":1}}' "echo through --args-file"
is "$rc" 0 "echo run exits 0"
is "$err" "" "echo run writes nothing on stderr"
"$A" run --quiet --caps "" --entry main --args-file args.json quickstart/echo.ail > raw.out
is "$(tail -c 2 raw.out | od -An -c | tr -d ' ')" '}\n' "output ends with exactly one newline"

run_capture out err rc "$A" run --quiet --caps "" --entry main --args-json '"{\"a\":1}"' quickstart/echo.ail
is "$out" '{"echo":{"a":1}}' "echo through --args-json"
run_capture out err rc bash -c "\"$A\" run --quiet --caps '' --entry main --args-file - quickstart/echo.ail < args.json"
is "$out" '{"echo":{"a":1}}' "echo through --args-file - (stdin)"
run_capture out err rc bash -c "\"$A\" run --quiet --caps '' --entry main --args-json - quickstart/echo.ail < args.json"
is "$out" '{"echo":{"a":1}}' "echo through --args-json - (stdin)"

run_capture out err rc "$A" run --quiet --caps= --entry=main --args-file=args.json quickstart/echo.ail
is "$out" '{"echo":{"a":1}}' "echo with --flag=value forms"

# the static binary, as capsules run it: empty environment
run_capture out err rc env -i "$S" run --quiet --caps "" --entry main --args-file args.json quickstart/echo.ail
is "$out" '{"echo":{"a":1}}' "static binary runs echo with an empty environment"
readelf -l "$S" | grep -q 'Requesting program interpreter'
nok $? "ailang-lite is statically linked (no program interpreter)"

# capsule layout: host/capsule/main.ail with module quickstart/echo
cp quickstart/echo.ail host/capsule/main.ail
run_capture out err rc "$A" run --quiet --caps "" --entry main --args-file args.json host/capsule/main.ail
is "$rc" 1 "module/path mismatch refused without AILANG_RELAX_MODULES"
like "$err" '^Error: MOD010 at host/capsule/main.ail:1:8: ' "MOD010 names file, line and column"
is "$out" "" "nothing on stdout after an error"
run_capture out err rc env AILANG_RELAX_MODULES=1 AILANG_FS_SANDBOX="$work" AILANG_CACHE_DIR="$work/.capsule-cache" "$A" run --quiet --caps "" --entry main --args-file args.json host/capsule/main.ail
is "$out" '{"echo":{"a":1}}' "AILANG_RELAX_MODULES=1 accepts the capsule layout"
run_capture out err rc "$A" run --quiet --caps "" --entry main --args-file args.json "$work/quickstart/echo.ail"
is "$out" '{"echo":{"a":1}}' "absolute path under the working directory matches the module name"

# flag errors exit 2
run_capture out err rc "$A" run --bogus quickstart/echo.ail
is "$rc" 2 "unknown flag exits 2"
like "$err" "unknown flag '--bogus'" "unknown flag is named"
run_capture out err rc "$A" run --args-file
is "$rc" 2 "flag without value exits 2"
run_capture out err rc "$A" frobnicate
is "$rc" 2 "unknown command exits 2"
run_capture out err rc "$A"
is "$rc" 2 "no command exits 2"
run_capture out err rc "$A" run --args-file args.json --args-json '"x"' quickstart/echo.ail
is "$rc" 2 "both --args-file and --args-json exits 2"

# argument decoding
printf '%s' '{"a":1}' > obj.json
run_capture out err rc "$A" run --args-file obj.json quickstart/echo.ail
is "$rc" 1 "a bare JSON object is not a string argument"
like "$err" '^Error: ARG_DECODE_MISMATCH at ' "ARG_DECODE_MISMATCH reported"
run_capture out err rc "$A" run --args-json '"unterminated' quickstart/echo.ail
like "$err" '^Error: ARG_DECODE_MISMATCH at ' "broken string literal is ARG_DECODE_MISMATCH"
run_capture out err rc "$A" run --args-file no-such-file.json quickstart/echo.ail
is "$rc" 1 "missing args file exits 1"
like "$err" 'no-such-file.json' "missing args file is named"

# entry
run_capture out err rc "$A" run --entry nope --args-file args.json quickstart/echo.ail
is "$rc" 1 "missing entry exits 1"
like "$err" "entrypoint 'nope' not found" "missing entry message"

# missing modules
cat > quickstart/imp.ail <<'AIL'
module quickstart/imp
import world/types (World)
export func main(input: string) -> string { input }
AIL
run_capture out err rc "$A" check quickstart/imp.ail
is "$rc" 1 "check refuses a world/* import"
like "$err" 'LDR001: module not found: world/types' "LDR001 module not found names the module"
run_capture out err rc "$A" check --json quickstart/imp.ail
like "$out" '^\{"file":"quickstart/imp.ail","passed":false,"error_count":1,"errors":\[\{"code":"LDR001","message":"[^"]*module not found: world/types","file":"quickstart/imp.ail","line":2,"column":8\}\]\}$' "check --json reports LDR001 with position"
run_capture out err rc "$A" check --json quickstart/echo.ail
is "$out" '{"file":"quickstart/echo.ail","passed":true,"error_count":0,"errors":[]}' "check --json on a good file"
is "$rc" 0 "check --json exits 0 when passed"
run_capture out err rc "$A" check quickstart/missing.ail
is "$rc" 1 "check of a missing file exits 1"
done_testing
