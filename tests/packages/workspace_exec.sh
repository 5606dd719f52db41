#!/bin/bash
# packages/se-tools/workspace-exec.ail, its plan phase run as a capsule runs
# it (`run --quiet --caps "" --entry main --args-file F`, an empty
# environment but AILANG_RELAX_MODULES): for every input the reference's
# own se_tools/exec.ail pins in its inline tests (sunholo-data/ailang-world,
# row 140), our plan is the same bytes as the reference's pinned plan
# (the table below: input TAB plan, both exact JSON text). Then the bounds
# the reference pins outside its source (too long for a literal): a
# 513-byte item, ASCII and multi-byte, refused, 512 bytes admitted; 17
# items refused, 16 admitted; a NUL and an empty item named. Control: a
# copy of the tool planning cost 2 differs from the pinned bytes.
. "$top_srcdir/tests/tap.sh"
A=$AILANG_LITE_DIRECT
SRC=$top_srcdir/packages/se-tools/workspace-exec.ail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# plan SRC INPUT: main(INPUT) of SRC, printed without its final newline
plan() {
  python3 -c 'import json, sys; sys.stdout.write(json.dumps(sys.argv[1], ensure_ascii=False))' "$2" > "$work/args.json"
  (cd "$work" && env -i AILANG_RELAX_MODULES=1 "$A" run --quiet --caps "" --entry main --args-file "$work/args.json" "$1")
}

cat > "$work/pinned.tsv" <<'PINNED'
{"phase":"plan","args":{"command":"test"}}	{"plan":"world/effect-plan/v1","effects":[{"id":"e1","effect":"Workspace.Exec","scope":"worktree","cost":1,"payload":{"command":"test"}}],"finish":false,"result":null}
{"phase":"plan","args":{"command":"test","args":["-run=X","./a/..."]}}	{"plan":"world/effect-plan/v1","effects":[{"id":"e1","effect":"Workspace.Exec","scope":"worktree","cost":1,"payload":{"command":"test","args":["-run=X","./a/..."]}}],"finish":false,"result":null}
{"phase":"plan","args":{"args":["./..."],"command":"vet"}}	{"plan":"world/effect-plan/v1","effects":[{"id":"e1","effect":"Workspace.Exec","scope":"worktree","cost":1,"payload":{"command":"vet","args":["./..."]}}],"finish":false,"result":null}
{"phase":"plan","args":{"command":"a-345678901234567890123456789012"}}	{"plan":"world/effect-plan/v1","effects":[{"id":"e1","effect":"Workspace.Exec","scope":"worktree","cost":1,"payload":{"command":"a-345678901234567890123456789012"}}],"finish":false,"result":null}
{"phase":"plan","args":{"command":"test","args":[]}}	{"plan":"world/effect-plan/v1","effects":[{"id":"e1","effect":"Workspace.Exec","scope":"worktree","cost":1,"payload":{"command":"test","args":[]}}],"finish":false,"result":null}
{"phase":"plan","args":{"command":"test","args":["a","a","a","a","a","a","a","a","a","a","a","a","a","a","a","a"]}}	{"plan":"world/effect-plan/v1","effects":[{"id":"e1","effect":"Workspace.Exec","scope":"worktree","cost":1,"payload":{"command":"test","args":["a","a","a","a","a","a","a","a","a","a","a","a","a","a","a","a"]}}],"finish":false,"result":null}
{"phase":"plan","args":{"command":"test","args":["--settings","x.json","--","sh"]}}	{"plan":"world/effect-plan/v1","effects":[{"id":"e1","effect":"Workspace.Exec","scope":"worktree","cost":1,"payload":{"command":"test","args":["--settings","x.json","--","sh"]}}],"finish":false,"result":null}
{"phase":"plan","args":{"command":"Test"}}	{"plan":"world/effect-plan/v1","effects":[],"finish":false,"result":{"ok":false,"refused":"command \"Test\" refused: a command id must match ^[a-z][a-z0-9-]{0,31}$ (the id of a command in the operator's exec profile)"}}
{"phase":"plan","args":{"command":"-x"}}	{"plan":"world/effect-plan/v1","effects":[],"finish":false,"result":{"ok":false,"refused":"command \"-x\" refused: a command id must match ^[a-z][a-z0-9-]{0,31}$ (the id of a command in the operator's exec profile)"}}
{"phase":"plan","args":{"command":"abcdefghijklmnopqrstuvwxyzabcdefg"}}	{"plan":"world/effect-plan/v1","effects":[],"finish":false,"result":{"ok":false,"refused":"command \"abcdefghijklmnopqrstuvwxyzabcdefg\" refused: a command id must match ^[a-z][a-z0-9-]{0,31}$ (the id of a command in the operator's exec profile)"}}
{"phase":"plan","args":{"command":""}}	{"plan":"world/effect-plan/v1","effects":[],"finish":false,"result":{"ok":false,"refused":"command \"\" refused: a command id must match ^[a-z][a-z0-9-]{0,31}$ (the id of a command in the operator's exec profile)"}}
{"phase":"plan","args":{"command":"go test"}}	{"plan":"world/effect-plan/v1","effects":[],"finish":false,"result":{"ok":false,"refused":"command \"go test\" refused: a command id must match ^[a-z][a-z0-9-]{0,31}$ (the id of a command in the operator's exec profile)"}}
{"phase":"plan","args":{"command":"test","args":["a","a","a","a","a","a","a","a","a","a","a","a","a","a","a","a","a"]}}	{"plan":"world/effect-plan/v1","effects":[],"finish":false,"result":{"ok":false,"refused":"argument \"args\" has 17 items; the limit is 16"}}
{"phase":"plan","args":{"command":"test","args":["ok","a\u0000b"]}}	{"plan":"world/effect-plan/v1","effects":[],"finish":false,"result":{"ok":false,"refused":"an args item contains a NUL byte"}}
{"phase":"plan","args":{"command":"test","args":"-run=X"}}	{"plan":"world/effect-plan/v1","effects":[],"finish":false,"result":{"ok":false,"refused":"argument \"args\" must be an array of strings"}}
{"phase":"plan","args":{"command":"test","args":[1]}}	{"plan":"world/effect-plan/v1","effects":[],"finish":false,"result":{"ok":false,"refused":"argument \"args\" must be an array of strings"}}
{"phase":"plan","args":{"command":"test","args":["-v",""]}}	{"plan":"world/effect-plan/v1","effects":[],"finish":false,"result":{"ok":false,"refused":"an args item is 0 bytes; each must be 1 to 512"}}
{"phase":"plan","args":{"command":"test","cwd":"/"}}	{"plan":"world/effect-plan/v1","effects":[],"finish":false,"result":{"ok":false,"refused":"unknown argument \"cwd\"; workspace-exec admits only: command, args"}}
{"phase":"plan","args":[]}	{"plan":"world/effect-plan/v1","effects":[],"finish":false,"result":{"ok":false,"refused":"arguments must be a JSON object"}}
{"phase":"plan","args":{"args":["-v"]}}	{"plan":"world/effect-plan/v1","effects":[],"finish":false,"result":{"ok":false,"refused":"missing required argument \"command\""}}
{"phase":"plan","args":{"command":["go","test"]}}	{"plan":"world/effect-plan/v1","effects":[],"finish":false,"result":{"ok":false,"refused":"argument \"command\" must be a string"}}
{"phase":"plan","args":{"command":"test"},"world":{}}	{"plan":"world/effect-plan/v1","effects":[],"finish":false,"result":{"ok":false,"refused":"input key \"world\" is not part of calling convention v2"}}
{"phase":"replay","args":{"command":"test"}}	{"plan":"world/effect-plan/v1","effects":[],"finish":false,"result":{"ok":false,"refused":"phase must be \"plan\" or \"finish\""}}
PINNED
is "$(wc -l < "$work/pinned.tsv" | tr -d ' ')" 23 "the reference pins 23 plan phases"

same=0 n=0
while IFS=$'\t' read -r input want; do
  n=$((n + 1))
  got=$(plan "$SRC" "$input")
  if [ "$got" = "$want" ]; then same=$((same + 1)); else diag "input: $input"; diag "want:  $want"; diag "got:   $got"; fi
done < "$work/pinned.tsv"
is "$same" "$n" "workspace-exec plans the reference's bytes for each of its $n pinned inputs"

# the bounds the reference pins beyond its literals
P='{"plan":"world/effect-plan/v1","effects":[{"id":"e1","effect":"Workspace.Exec","scope":"worktree","cost":1,"payload":'
R='{"plan":"world/effect-plan/v1","effects":[],"finish":false,"result":{"ok":false,"refused":'
x512=$(printf 'x%.0s' $(seq 512)); e256=$(printf '\303\251%.0s' $(seq 256))
check() { # DESCRIPTION ARGS-JSON EXPECTED-PLAN
  is "$(plan "$SRC" "{\"phase\":\"plan\",\"args\":$2}")" "$3" "$1"
}
check "an item of 512 ASCII bytes is admitted" "{\"command\":\"test\",\"args\":[\"$x512\"]}" \
  "$P{\"command\":\"test\",\"args\":[\"$x512\"]}}],\"finish\":false,\"result\":null}"
check "an item of 513 ASCII bytes is refused" "{\"command\":\"test\",\"args\":[\"${x512}x\"]}" \
  "$R\"an args item is 513 bytes; each must be 1 to 512\"}}"
check "an item of 256 two-byte characters (512 bytes) is admitted" "{\"command\":\"test\",\"args\":[\"$e256\"]}" \
  "$P{\"command\":\"test\",\"args\":[\"$e256\"]}}],\"finish\":false,\"result\":null}"
check "257 characters of 513 UTF-8 bytes are refused (bytes count, not characters)" \
  "{\"command\":\"test\",\"args\":[\"ok\",\"${e256}a\"]}" "$R\"an args item is 513 bytes; each must be 1 to 512\"}}"
check "a four-byte character is one item of 4 bytes" "{\"command\":\"t\",\"args\":[\"$(printf '\360\237\216\211')\"]}" \
  "$P{\"command\":\"t\",\"args\":[\"$(printf '\360\237\216\211')\"]}}],\"finish\":false,\"result\":null}"
a16=$(printf '"a",%.0s' $(seq 15))'"a"'
check "16 items are admitted" "{\"command\":\"test\",\"args\":[$a16]}" \
  "$P{\"command\":\"test\",\"args\":[$a16]}}],\"finish\":false,\"result\":null}"
check "17 items are refused" "{\"command\":\"test\",\"args\":[$a16,\"a\"]}" \
  "$R\"argument \\\"args\\\" has 17 items; the limit is 16\"}}"
check "a NUL in an over-long item is named before its length" "{\"command\":\"test\",\"args\":[\"${x512}\\u0000\"]}" \
  "$R\"an args item contains a NUL byte\"}}"
check "the first bad item decides" "{\"command\":\"test\",\"args\":[\"\",\"a\\u0000\"]}" \
  "$R\"an args item is 0 bytes; each must be 1 to 512\"}}"
check "a non-ASCII command id is refused" "{\"command\":\"t$(printf '\303\251')st\"}" \
  "$R\"command \\\"t$(printf '\303\251')st\\\" refused: a command id must match ^[a-z][a-z0-9-]{0,31}\$ (the id of a command in the operator's exec profile)\"}}"
check "a command id starting with a digit is refused" "{\"command\":\"9x\"}" \
  "$R\"command \\\"9x\\\" refused: a command id must match ^[a-z][a-z0-9-]{0,31}\$ (the id of a command in the operator's exec profile)\"}}"
is "$(plan "$SRC" '{"phase":"finish","args":{"command":"test"},"results":[]}')" \
  '{"ok":false,"refused":"workspace-exec has no finish phase"}' "there is no finish phase"

# control: the comparison sees a changed plan
sed 's/kv("cost", jint(1))/kv("cost", jint(2))/' "$SRC" > "$work/cost2.ail"
ok $(cmp -s "$SRC" "$work/cost2.ail"; echo $((1 - $?))) "control: the copy differs from the tool"
IFS=$'\t' read -r input want < "$work/pinned.tsv"
got=$(plan "$work/cost2.ail" "$input")
isnt_same=$([ "$got" != "$want" ] && echo 0 || echo 1)
ok "$isnt_same" "control: a tool planning cost 2 does not give the pinned bytes"
done_testing
