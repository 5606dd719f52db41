#!/bin/bash
# world-publish transitions / check and worldd epoch bootstrap / show
# (docs/design.md §7, docs/publishing.md). Every outcome and refusal line is
# asserted exactly; every refusal leaves the database file byte-identical;
# the typed confirmation goes through a pseudo-terminal (tests/publish/pty.py)
# with CI removed from that child's environment only.
. "$top_srcdir/tests/tap.sh"
WP="$top_builddir/cli/world-publish"
STUB="$top_builddir/tests/supervisor/stub-interp"
PTY="$top_srcdir/tests/publish/pty.py"
T=$(mktemp -d /tmp/world-publish.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || bail "cd $T"
DB="$T/w.db"
SQL=${SQLITE3_SHELL:-}

# ---- fixtures (docs/design.md §2's echo; paths relative to the current directory)
mkdir -p src
cat > src/echo.ail <<'AIL'
module echo
export func main(input: string) -> string { "{\"echo\":${input}}" }
AIL
cat > src/echo2.ail <<'AIL'
module echo
-- second revision: a changed source
export func main(input: string) -> string { "{\"echo2\":${input}}" }
AIL
cat > src/echo3.ail <<'AIL'
module echo
export func main(input: string) -> string { "{\"echo3\":${input}}" }
AIL
printf 'module bad\nimport world/secrets (get)\nexport func main(input: string) -> string { input }\n' > src/world-import.ail
printf 'module nomain\nexport func helper(input: string) -> string { input }\n' > src/nomain.ail
printf 'module two\nexport func main(a: string, b: string) -> string { a }\n' > src/twoargs.ail
printf 'module hidden\nfunc main(input: string) -> string { input }\n' > src/unexported.ail
printf 'module u\n-- caf\xc3\n export func main(input: string) -> string { input }\n' > src/badutf8.ail
mkdir -p src/dir.ail
head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' 'x' > src/big.ail

desc() { # desc ID FILE [extra JSON members]
  printf '{"id":"%s","title":"Echo","description":"echoes its input","transitionFnFile":"%s","inputSchema":{"type":"object"},"outputSchema":{"type":"object"},"access":null,"declaredEffects":[]%s}' "$1" "$2" "${3:+,$3}"
}
manifest() { # manifest FILE DESC...
  local f=$1; shift
  local IFS=,
  printf '[%s]\n' "$*" > "$f"
}
manifest m1.json "$(desc tools.echo src/echo.ail)"
manifest m2.json "$(desc tools.echo src/echo2.ail)"
manifest m3.json "$(desc tools.echo src/echo3.ail)"

dbsum() { cat "$DB" "$DB-wal" 2>/dev/null | sha256sum | cut -d' ' -f1; }
head_of() { "$SQL" -readonly "$DB" "SELECT ref || ' ' || revision FROM heads WHERE name = 'world/transition-registry/v1'"; }
# publish_tty ANSWER MANIFEST [world-publish flags...]: through the pty, CI unset
publish_tty() {
  local answer=$1 m=$2; shift 2
  env -u CI -u GITHUB_ACTIONS python3 "$PTY" --out "$T/o" --err "$T/e" --tty "$T/t" --answer "$answer" -- \
    "$WP" transitions --store "$DB" --manifest "$m" --ailang-bin "$AILANG_LITE" "$@"
  rc=$?; out=$(cat "$T/o"); err=$(cat "$T/e"); tty=$(cat "$T/t")
}
phrase() { echo "publish $1 transitions to $DB"; }
prompt() { printf 'Type exactly, to write a LOCAL transition-registry revision (%s descriptor(s) from %s):\n  publish %s transitions to %s\n> ' "$1" "$2" "$1" "$DB"; }

# ---- worldd epoch bootstrap / show
run_capture out err rc env -u CI -u GITHUB_ACTIONS "$WP" transitions --store "$DB" --manifest m1.json --ailang-bin "$AILANG_LITE"
is "$rc" 4 "publishing to a store that does not exist: exit 4"
is "$err" "world-publish transitions: store $DB: No such file or directory (create and bootstrap it with worldd epoch bootstrap --store $DB --ailang-bin BIN)" "... says how to create it"
[ ! -e "$DB" ]; ok $? "... and creates nothing"

run_capture out err rc "$WORLDD" epoch bootstrap --store "$DB" --ailang-bin "$AILANG_LITE"
is "$rc" 0 "epoch bootstrap: exit 0"
REL=$("$AILANG_LITE" --version | head -n1)
IREF=$("$WORLDD" hash < "$AILANG_LITE")
is "$out" "bootstrapped world/epoch-registry/v1: epoch 1 = interpreter release \"$REL\" (interpreter $IREF)" "epoch bootstrap: its line"
run_capture out err rc "$WORLDD" epoch bootstrap --store "$DB" --ailang-bin "$AILANG_LITE"
is "$out" "world/epoch-registry/v1 already nominates interpreter release \"$REL\" as epoch 1; unchanged (interpreter $IREF)" "a second bootstrap: unchanged"
run_capture out err rc "$WORLDD" epoch bootstrap --store "$DB" --ailang-bin "$STUB"
is "$rc" 8 "bootstrap with another release on the same store: exit 8"
is "$err" "worldd epoch bootstrap: store is bound to interpreter release \"$REL\" (epoch 1); refusing release \"STUB-interp v0.0.1 (test double, not AILANG)\"; nominate it as the next epoch, attended: worldd epoch nominate --store DB --ailang-bin BIN" "... names both releases and points to nominate"
run_capture out err rc "$WORLDD" epoch show --store "$DB"
like "$out" "^world/epoch-registry/v1 revision 1 \(head sha256:[0-9a-f]{64}\)" "epoch show: the head"
is "$(printf '%s' "$out" | sed -n 2p)" "  epoch 1: interpreter release \"$REL\"" "epoch show: one line per epoch"
EH=$(printf '%s' "$out" | sed -n 1p | grep -Eo 'sha256:[0-9a-f]{64}')
run_capture out err rc "$WORLDD" epoch show --store "$DB" --json
is "$out" "{\"epochs\":[{\"epoch\":1,\"interpreters\":[{\"admission\":\"bootstrap\",\"ref\":\"$IREF\"}],\"release\":\"$REL\"}],\"head\":\"$EH\",\"revision\":1}" "epoch show --json"
run_capture out err rc "$WORLDD" epoch show --store "$T/none.db"
is "$rc" 4 "epoch show on a missing store: exit 4"

# ---- first publish -> revision 1
publish_tty "$(phrase 1)" m1.json
is "$rc" 0 "first publish: exit 0"
is "$tty" "$(prompt 1 m1.json)$(phrase 1)" "the prompt on the terminal, exactly"
is "$(printf '%s' "$out" | sed -n 1p)" "semantics epoch 1 derived from world/epoch-registry/v1 for interpreter release \"$REL\"" "the epoch line"
like "$(printf '%s' "$out" | sed -n 2p)" "^published transition registry revision 1 \(head sha256:[0-9a-f]{64}\); the daemon's A2A card will list these skills on its next read$" "published revision 1"
H1=$(printf '%s' "$out" | sed -n 2p | grep -Eo 'sha256:[0-9a-f]{64}')
"$WORLDD" object get --store "$DB" "$H1" --payload > reg1.json
SRC1=$("$WORLDD" hash < src/echo.ail)
is "$(cat reg1.json)" "{\"parent\":null,\"revision\":1,\"transitions\":[{\"access\":null,\"declaredEffects\":[],\"description\":\"echoes its input\",\"id\":\"tools.echo\",\"inputSchema\":{\"type\":\"object\"},\"interpreter\":\"$IREF\",\"outputSchema\":{\"type\":\"object\"},\"semanticsEpoch\":1,\"title\":\"Echo\",\"transitionFn\":\"$SRC1\"}]}" "revision 1's payload: the format of coordinator/registry.h"
run_capture o e r "$WORLDD" object get --store "$DB" "$SRC1"
like "$o" '"semanticId":"world/transition-source/v1"' "the source is stored as world/transition-source/v1"

is "$(printf '%s' "$out" | sed -n 3p)" "  new tools.echo" "... and one line per descriptor: new"

# ---- identical republish -> UNCHANGED, not one byte written, nothing asked:
# with CI set and no terminal at all (the attended step would refuse both)
before=$(dbsum)
run_capture out err rc env CI=1 setsid "$WP" transitions --store "$DB" --manifest m1.json --ailang-bin "$AILANG_LITE" </dev/null
is "$rc" 0 "identical republish with CI set and no terminal: exit 0 (nothing to confirm) ($err)"
is "$(printf '%s' "$out" | sed -n 2p)" "transition registry UNCHANGED at revision 1 (head $H1); nothing written, nothing to confirm" "UNCHANGED line"
is "$(printf '%s' "$out" | sed -n 3p)" "  UNCHANGED tools.echo" "... and the descriptor's line"
is "$(dbsum)" "$before" "the database file is byte-identical after the identical republish"
# the same manifest from stdin (--manifest -): the same answer
run_capture out err rc env CI=1 "$WP" transitions --store "$DB" --manifest - --ailang-bin "$AILANG_LITE" < m1.json
is "$rc:$(printf '%s' "$out" | sed -n 3p)" "0:  UNCHANGED tools.echo" "--manifest - reads the manifest from stdin"
# control: a changed one with CI set is refused by the attended step
run_capture out err rc env CI=1 "$WP" transitions --store "$DB" --manifest m2.json --ailang-bin "$AILANG_LITE"
is "$rc:$(printf '%s' "$err" | sed -n 1p)" "20:STOP fence=ci reason=ci" "control: a changed republish with CI set still stops at the attended step"

# ---- changed source -> revision 2 with the right parent
publish_tty "$(phrase 1)" m2.json
is "$rc" 0 "changed source: exit 0"
like "$(printf '%s' "$out" | sed -n 2p)" "^published transition registry revision 2 \(head sha256:[0-9a-f]{64}\);" "published revision 2"
H2=$(printf '%s' "$out" | sed -n 2p | grep -Eo 'sha256:[0-9a-f]{64}')
is "$(printf '%s' "$out" | sed -n 3p)" "  changed tools.echo (transitionFn)" "... the descriptor's line names the changed key"
"$WORLDD" object get --store "$DB" "$H2" --payload > reg2.json
like "$(cat reg2.json)" "^\{\"parent\":\"$H1\",\"revision\":2," "revision 2's parent is revision 1's head"
like "$(cat reg2.json)" "\"transitionFn\":\"$("$WORLDD" hash < src/echo2.ail)\"" "... and it names the new source"

# ---- the attended fences (m3 would write revision 3: see the control below)
SRC3=$("$WORLDD" hash < src/echo3.ail)
before=$(dbsum)
run_capture out err rc env CI=true "$WP" transitions --store "$DB" --manifest m3.json --ailang-bin "$AILANG_LITE"
is "$rc" 20 "CI set: exit 20"
is "$err" "$(printf 'STOP fence=ci reason=ci\n  CI is set; this step is never run in CI (unset it only if a human is at this terminal)')" "CI set: the STOP line and its detail"
env -u CI GITHUB_ACTIONS=true python3 "$PTY" --out o --err e --tty t --answer "$(phrase 1)" -- "$WP" transitions --store "$DB" --manifest m3.json --ailang-bin "$AILANG_LITE"
is "$?:$(head -n1 e)" "20:STOP fence=ci reason=github_actions" "GITHUB_ACTIONS set, even at a terminal: STOP fence=ci"
is "$(cat t)" "" "... and nothing is prompted"
run_capture out err rc bash -c "echo '$(phrase 1)' | env -u CI -u GITHUB_ACTIONS setsid -w '$WP' transitions --store '$DB' --manifest m3.json --ailang-bin '$AILANG_LITE'"
is "$rc" 20 "no controlling terminal (setsid), phrase piped in: exit 20"
is "$(printf '%s' "$err" | sed -n 1p)" "STOP fence=tty reason=no-controlling-terminal" "... STOP fence=tty reason=no-controlling-terminal"
like "$(printf '%s' "$err" | sed -n 2p)" "^  opening /dev/tty failed: .*; there is no controlling terminal here \(an agent harness, setsid, cron or CI\)\. fix: run it yourself from a terminal window \(an IDE terminal pane works\); the step is the operator's: an agent must not answer it$" "... the detail ends with the fix"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --stdin null --out o --err e --tty t --answer "$(phrase 1)" -- "$WP" transitions --store "$DB" --manifest m3.json --ailang-bin "$AILANG_LITE"
is "$?:$(head -n1 e)" "20:STOP fence=tty reason=stdin-is-not-the-controlling-terminal" "stdin /dev/null with a terminal present: refused"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --stdin pipe --out o --err e --tty t --answer "$(phrase 1)" -- "$WP" transitions --store "$DB" --manifest m3.json --ailang-bin "$AILANG_LITE"
is "$?:$(head -n1 e)" "20:STOP fence=tty reason=stdin-not-a-terminal" "the phrase piped on stdin with a terminal present: refused"
is "$(cat t)" "" "... and nothing is prompted"
publish_tty "publish 1 transition to $DB" m3.json
is "$rc" 20 "wrong phrase: exit 20"
is "$err" "$(printf 'STOP fence=confirmation reason=mismatch\n  the typed line is not the required confirmation phrase; nothing was written (type it exactly as printed)')" "wrong phrase: STOP fence=confirmation reason=mismatch"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --eof --out o --err e --tty t -- "$WP" transitions --store "$DB" --manifest m3.json --ailang-bin "$AILANG_LITE"
is "$?" 20 "EOF at the prompt: exit 20"
is "$(cat e)" "$(printf 'STOP fence=confirmation reason=eof\n  the terminal closed before a confirmation line was typed; nothing was written')" "EOF: STOP fence=confirmation reason=eof"
publish_tty "$(phrase 1)" m3.json --live
is "$rc:$err" "20:$(printf 'STOP fence=mode reason=transitions-is-read-only\n  transitions writes a LOCAL registry revision, never a public one; --live is refused rather than ignored')" "--live: refused, even with the right phrase"
is "$tty" "" "... before any prompt"
is "$(dbsum)" "$before" "every refused attended step left the database byte-identical"
run_capture o e r "$WORLDD" object get --store "$DB" "$SRC3"
is "$r" 4 "... and the source was not stored"
# no process owns the store: another writer's transaction (the sqlite3
# shell's BEGIN IMMEDIATE, 4 s) makes the publish wait -- past --wait-lock
# 0.3 it is refused, nothing written (exit 5); with --wait-lock 120 it waits
# and publishes revision 3
wt() { rm -f "$DB.held"; ( printf 'BEGIN IMMEDIATE;\n.shell touch %s.held\n' "$DB"; sleep "$1"; printf 'ROLLBACK;\n' ) | "$SQLITE3_SHELL" "$DB" >/dev/null 2>&1 & holder=$!
  for _ in $(seq 1 200); do [ -e "$DB.held" ] && break; sleep 0.05; done; rm -f "$DB.held"; }
h0=$(head_of)
wt 4
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --out o --err e --tty t --answer "$(phrase 1)" -- "$WP" transitions --store "$DB" --manifest m3.json --ailang-bin "$AILANG_LITE" --wait-lock 0.3
is "$?" 5 "another writer's transaction outlasting --wait-lock 0.3: exit 5"
like "$(cat e)" "^world-publish transitions: .*database is locked" "... one line saying the store is locked"
wait "$holder"
is "$(head_of)" "$h0" "... nothing written (the registry head did not move)"
run_capture o e r "$WORLDD" object get --store "$DB" "$SRC3"
is "$r" 4 "... and the source was not stored"
wt 3
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --out "$T/o" --err "$T/e" --tty "$T/t" --answer "$(phrase 1)" -- \
  "$WP" transitions --store "$DB" --manifest m3.json --ailang-bin "$AILANG_LITE" --wait-lock 120
rc=$?; out=$(cat "$T/o"); err=$(cat "$T/e")
wait "$holder"
is "$rc" 0 "control: with --wait-lock 120 the same publish waits for the other writer, attended, succeeds ($err)"
like "$out" "published transition registry revision 3 " "... revision 3"
run_capture o2 e2 r2 "$WP" transitions --store "$DB" --manifest m3.json --ailang-bin "$AILANG_LITE" --wait-lock soon
is "$r2" 2 "--wait-lock needs a number of seconds"

# ---- a head moved by another writer between the checks and the swap
cat > src/echo4.ail <<'AIL'
module echo
export func main(input: string) -> string { "{\"echo4\":${input}}" }
AIL
manifest m4.json "$(desc tools.echo src/echo4.ail)"
SRC4=$("$WORLDD" hash < src/echo4.ail)
WORLD_PUBLISH_TEST_RIVAL=same-id publish_tty "$(phrase 1)" m4.json
is "$rc" 8 "same-id conflict: exit 8"
is "$err" "world-publish transitions: both this publish and the registry's revision 4 set \"tools.echo\" with different bytes; nothing was written — republish the winner's descriptor, or remove the entry" "same-id conflict: the message"
run_capture o e r "$WORLDD" object get --store "$DB" "$SRC4"
is "$r" 4 "... the source was not stored"
if [ -n "$SQL" ]; then
  like "$(head_of)" " 4$" "... the head is the rival's revision 4"
  "$WORLDD" object get --store "$DB" "$(head_of | cut -d' ' -f1)" --payload > rival.json
  like "$(cat rival.json)" '"title":"a rival publisher.s title"' "... which kept its bytes"
else
  skip "no sqlite3 shell" "the head is the rival's"; skip "no sqlite3 shell" "the rival kept its bytes"
fi
WORLD_PUBLISH_TEST_RIVAL=moving publish_tty "$(phrase 1)" m4.json
is "$rc:$err" "8:world-publish transitions: the registry head kept moving during publish; re-run the command" "a head that kept moving: exit 8 and the message"
run_capture o e r "$WORLDD" object get --store "$DB" "$SRC4"
is "$r" 4 "... the source was not stored"
[ -n "$SQL" ] && { like "$(head_of)" " 7$" "... the head is the rivals' (revision 7)"; } || skip "no sqlite3 shell" "the rivals' head"
# control: without a rival the same publish lands on top of the rivals' revision
publish_tty "$(phrase 1)" m4.json
is "$rc" 0 "control: without the rival the same publish succeeds"
like "$out" "published transition registry revision 8 " "... as revision 8, over the rivals' revision 7"
"$WORLDD" object get --store "$DB" "$(printf '%s' "$out" | sed -n 2p | grep -Eo 'sha256:[0-9a-f]{64}')" --payload > reg8.json
like "$(cat reg8.json)" '"id":"zz.rival.3"' "... keeping the other writer's descriptors"

# ---- sources that must never be stored (checked before any prompt)
refuse() { # refuse NAME WANT_RC WANT_ERR_LINE MANIFEST: through transitions, nothing written
  local name=$1 want_rc=$2 want=$3 m=$4
  local b
  b=$(dbsum)
  run_capture out err rc env -u CI -u GITHUB_ACTIONS "$WP" transitions --store "$DB" --manifest "$m" --ailang-bin "$AILANG_LITE"
  is "$rc" "$want_rc" "$name: exit $want_rc"
  is "$(printf '%s' "$err" | sed -n 1p)" "$want" "$name: the message"
  is "$(dbsum)" "$b" "$name: the database is byte-identical"
}
manifest bad.json "$(desc tools.bad src/world-import.ail)"
refuse "a world/* import" 19 'world-publish transitions: entry "tools.bad": source check: source check refused (interpreter exit 1): Error: LDR001 at src/world-import.ail:2:8: LDR001: module not found: world/secrets' bad.json
is "$(printf '%s' "$err" | sed -n 2p)" "world-publish transitions: 1 of 1 descriptor(s) refused; nothing was written" "... and says nothing was written"
run_capture o e r "$WORLDD" object get --store "$DB" "$("$WORLDD" hash < src/world-import.ail)"
is "$r" 4 "... the refused source is not stored"
manifest bad.json "$(desc tools.nomain src/nomain.ail)"
refuse "a module without main" 19 "world-publish transitions: entry \"tools.nomain\": the source does not define main taking one argument (interpreter: Error: CHK_NO_MAIN at src/nomain.ail:1:8: no function 'main': a transition needs func main(input: string) -> string)" bad.json
manifest bad.json "$(desc tools.two src/twoargs.ail)"
refuse "main taking two arguments" 19 "world-publish transitions: entry \"tools.two\": the source does not define main taking one argument (interpreter: Error: CHK_MAIN_ARITY at src/twoargs.ail:2:13: 'main' takes 2 parameters; a transition's main takes exactly one (the input string))" bad.json
manifest bad.json "$(desc tools.hidden src/unexported.ail)"
refuse "main not exported" 19 'world-publish transitions: entry "tools.hidden": the source does not export main (no `export func main(` line)' bad.json

# ---- descriptor checks (world-publish check: no store, no attended step)
chk() { # chk NAME WANT_LINE MANIFEST: one refused entry
  run_capture out err rc "$WP" check --manifest "$3" --ailang-bin "$AILANG_LITE"
  nok "$rc" "$1: check exits non-zero"
  is "$(printf '%s' "$out" | grep '^refused')" "$2" "$1: the line"
}
manifest bad.json "$(desc Tools.Echo src/echo.ail)"
chk "upper-case id" 'refused entry #1: id "Tools.Echo" byte 1 (0x54) is not one of [a-z0-9_./-]' bad.json
manifest bad.json "$(desc 'tools echo' src/echo.ail)"
chk "a space in the id" 'refused entry #1: id "tools echo" byte 6 (0x20) is not one of [a-z0-9_./-]' bad.json
manifest bad.json "$(desc tools..echo src/echo.ail)"
chk "an empty segment" 'refused entry #1: id "tools..echo" has an empty segment at byte 6 (segments are separated by one '"'.'"' or '"'/'"')' bad.json
LONG=$(printf 'a%.0s' $(seq 129))
manifest bad.json "$(desc "$LONG" src/echo.ail)"
chk "an id over 128 bytes" "refused entry #1: id \"$LONG\" is 129 bytes; an id is 1-128 bytes" bad.json
LONG=$(printf 'a%.0s' $(seq 64))
manifest ok64.json "$(desc "$LONG" src/echo.ail)"
run_capture out err rc "$WP" check --manifest ok64.json --ailang-bin "$AILANG_LITE"
is "$rc" 0 "control: a 64-byte tool name would publish"
manifest bad.json "$(desc "${LONG}a" src/echo.ail)"
chk "a 65-byte id: its tool name is over 64 bytes" "refused entry \"${LONG}a\": MCP tool name \"${LONG}a\" is 65 bytes after escaping; at most 64" bad.json
TOOLY=$(printf 'd_%.0s' $(seq 21))dd # each '_' before a 'd' is written _u
manifest bad.json "$(desc "$TOOLY" src/echo.ail)"
chk "a tool name over 64 bytes after escaping" "refused entry \"$TOOLY\": MCP tool name \"$(printf 'd_u%.0s' $(seq 21))dd\" is 65 bytes after escaping; at most 64" bad.json
manifest bad.json "$(desc tools.echo src/echo.ail)" "$(desc tools.echo src/echo2.ail)"
chk "duplicate ids" 'refused entry "tools.echo": duplicate id (also entry #1)' bad.json
manifest bad.json "$(desc tools.echo src/echo.ail '"inputSchema":[]' | sed 's/"inputSchema":{"type":"object"},//')"
chk "a schema that is not an object" 'refused entry "tools.echo": inputSchema is not a JSON object' bad.json
manifest bad.json "$(desc tools.echo src/echo.ail | sed 's/"outputSchema":{"type":"object"}/"outputSchema":{"type":"object","patternProperties":{"^a":{}}}/')"
chk "a schema with an unsupported keyword" 'refused entry "tools.echo": outputSchema: schema (root): unsupported keyword "patternProperties"' bad.json
manifest bad.json "$(desc tools.echo src/echo.ail | sed 's/"inputSchema":{"type":"object"}/"inputSchema":{"type":"object","properties":{"p":{"type":"string","pattern":"^a"}}}/')"
chk "an unsupported keyword deep in a schema" 'refused entry "tools.echo": inputSchema: schema /properties/p: unsupported keyword "pattern"' bad.json
manifest bad.json "$(desc tools.echo src/echo.ail | sed 's/"inputSchema":{"type":"object"}/"inputSchema":{"type":"string"}/')"
chk "an inputSchema whose top level is not an object" 'refused entry "tools.echo": inputSchema: the top level must be an object schema ("type": "object"), not string' bad.json
manifest bad.json "$(desc tools.echo src/echo.ail | sed 's/"outputSchema":{"type":"object"}/"outputSchema":{"type":["object","null"]}/')"
chk "an outputSchema whose top level may be null" 'refused entry "tools.echo": outputSchema: the top level must be an object schema ("type": "object"), not a list of types' bad.json
b=$(dbsum)
run_capture out err rc env -u CI "$WP" transitions --store "$DB" --manifest bad.json --ailang-bin "$AILANG_LITE"
is "$rc:$(dbsum)" "3:$b" "... refused by transitions too (exit 3), nothing written"
python3 - <<'PY'
import json
d = {"id": "tools.echo", "transitionFnFile": "src/echo.ail", "inputSchema": {"description": "x" * (256 * 1024)}}
json.dump([d], open("bigschema.json", "w"))
d["inputSchema"] = {"description": "x" * (256 * 1024 - 18)}
json.dump([d], open("maxschema.json", "w"))
PY
chk "a schema over 256 KiB" 'refused entry "tools.echo": inputSchema is 262162 bytes canonicalised; at most 262144' bigschema.json
run_capture out err rc "$WP" check --manifest maxschema.json --ailang-bin "$AILANG_LITE"
is "$rc" 0 "control: a schema of exactly 256 KiB would publish"
manifest bad.json "$(desc tools.echo src/echo.ail '"titel":"x"')"
chk "an unknown key" 'refused entry "tools.echo": unknown key "titel"' bad.json
manifest bad.json "$(desc tools.echo src/echo.ail '"access":{"effect":"Workspace.Read","scope":"worktree","cost":0,"budget":1}' | sed 's/"access":null,//')"
chk "an unknown key in access" 'refused entry "tools.echo": access: unknown key "budget" (known: effect, scope, cost)' bad.json
# An access or declared effect no grant could name would never be visible
# or callable: refused, in the grant grammar's words (control: a name the
# grant grammar takes publishes).
manifest bad.json "$(desc tools.echo src/echo.ail '"access":{"effect":"Workspace-Read","scope":"worktree","cost":0}' | sed 's/"access":null,//')"
chk "an access effect no grant can name" 'refused entry "tools.echo": access: effect must be dotted segments of [A-Za-z][A-Za-z0-9_]*, at most 128 bytes (what a grant can name), not "Workspace-Read"' bad.json
manifest bad.json "$(desc tools.echo src/echo.ail '"access":{"effect":"Workspace.Read","scope":"work tree*","cost":0}' | sed 's/"access":null,//')"
chk "an access scope no grant can name" 'refused entry "tools.echo": access: scope must be 1-128 bytes of [A-Za-z0-9._/:-] (what a grant can name), not "work tree*"' bad.json
manifest ok.json "$(desc tools.echo src/echo.ail '"access":{"effect":"Workspace.Read","scope":"repo/x:main-1","cost":0}' | sed 's/"access":null,//')"
run_capture out err rc "$WP" check --manifest ok.json --ailang-bin "$AILANG_LITE"
is "$rc" 0 "control: an access the grant grammar takes would publish"
manifest bad.json "$(desc tools.echo src/nope.ail)"
P=$(pwd -P) # a refusal names the absolute path tried (tests/publish/sources.sh)
chk "a missing source file" "refused entry \"tools.echo\": transitionFnFile \"src/nope.ail\" of manifest \"bad.json\": open $P/src/nope.ail: No such file or directory" bad.json
manifest bad.json "$(desc tools.echo src/dir.ail)"
chk "a directory as source" "refused entry \"tools.echo\": transitionFnFile \"src/dir.ail\" of manifest \"bad.json\": $P/src/dir.ail is not a regular file (a directory)" bad.json
mkfifo src/fifo.ail
manifest bad.json "$(desc tools.echo src/fifo.ail)"
chk "a FIFO as source (never waited on)" "refused entry \"tools.echo\": transitionFnFile \"src/fifo.ail\" of manifest \"bad.json\": $P/src/fifo.ail is not a regular file (a FIFO)" bad.json
manifest bad.json "$(desc tools.echo /dev/zero)"
chk "a device as source" 'refused entry "tools.echo": transitionFnFile "/dev/zero" of manifest "bad.json": /dev/zero is not a regular file (a character device)' bad.json
mkfifo fifo.json
run_capture out err rc "$WP" check --manifest fifo.json --ailang-bin "$AILANG_LITE"
is "$rc:$err" "3:world-publish check: manifest: fifo.json is not a regular file (a FIFO)" "a FIFO as the manifest: refused, never waited on"
run_capture out err rc "$WP" check --manifest m1.json --ailang-bin src/fifo.ail
is "$rc:$err" "3:world-publish check: interpreter src/fifo.ail: not a regular file" "a FIFO as the interpreter: refused, never waited on"
printf '[\n  {"id": "tools.echo",\n   "title": x}\n]\n' > syntax.json
run_capture out err rc "$WP" check --manifest syntax.json --ailang-bin "$AILANG_LITE"
like "$rc:$err" '^3:world-publish check: manifest "syntax.json": line 3, column 13: ' "a JSON error in the manifest names its line and column ($err)"
# without --ailang-bin, world-publish runs the default interpreter like
# worldd (here the one built beside it; tests/cli_install.sh the installed one)
run_capture out err rc "$WP" check --manifest m1.json
is "$rc:$err" "0:" "check without --ailang-bin uses the default interpreter"
like "$("$WP" --help)" "the installed interpreter /[^ ]*/ailang-lite" "world-publish --help says what runs without --ailang-bin"
# transitionFnFile is relative to the current directory (the reference's
# definition; --sources-relative-to manifest is the explicit other rule):
# tests/publish/sources.sh
manifest bad.json "$(desc tools.echo src/big.ail)"
chk "a source over the 1 MiB cap" "refused entry \"tools.echo\": transitionFnFile \"src/big.ail\" of manifest \"bad.json\": $P/src/big.ail is 1048577 bytes, over the 1048576-byte cap" bad.json
manifest bad.json "$(desc tools.echo src/badutf8.ail)"
chk "invalid UTF-8 in a source" 'refused entry "tools.echo": transitionFnFile "src/badutf8.ail" of manifest "bad.json": transition source: byte 15: invalid UTF-8' bad.json
manifest bad.json "$(desc tools.echo src/echo.ail | sed 's/,"transitionFnFile":"src\/echo.ail"//')"
chk "no source at all" 'refused entry "tools.echo": a source is required: transitionFnFile (a source file) or transitionFn (a stored source'"'"'s ref)' bad.json
python3 - <<'PY'
import json
d = {"id": "", "transitionFnFile": "src/echo.ail"}
json.dump([dict(d, id="t%d" % i) for i in range(1025)], open("many.json", "w"))
json.dump([dict(d, id="t%d" % i) for i in range(1024)], open("max.json", "w"))
PY
run_capture out err rc "$WP" check --manifest many.json --ailang-bin "$AILANG_LITE"
is "$rc:$err" '3:world-publish check: manifest "many.json": 1025 descriptors; at most 1024' "more than 1024 entries: refused as a whole"
b=$(dbsum)
run_capture out err rc env -u CI "$WP" transitions --store "$DB" --manifest many.json --ailang-bin "$AILANG_LITE"
is "$rc:$err:$(dbsum)" "3:world-publish transitions: manifest \"many.json\": 1025 descriptors; at most 1024:$b" "... by transitions too, nothing written"

run_capture out err rc "$WP" check --manifest max.json --ailang-bin "$AILANG_LITE"
is "$rc:$(printf '%s' "$out" | tail -n1)" "0:1024 of 1024 descriptor(s) would publish" "control: 1024 entries are allowed (one source, checked once)"
# the registry as a whole: at most 1024 descriptors
FULL="$T/full.db"
"$WORLDD" epoch bootstrap --store "$FULL" --ailang-bin "$AILANG_LITE" > /dev/null
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --out o --err e --tty t --answer "publish 1024 transitions to $FULL" -- "$WP" transitions --store "$FULL" --manifest max.json --ailang-bin "$AILANG_LITE"
is "$?:$(sed -n 2p o | grep -o "^published transition registry revision [0-9]*")" "0:published transition registry revision 1" "1024 descriptors published"
manifest one-more.json "$(desc t1024 src/echo.ail)"
b=$(cat "$FULL" "$FULL-wal" 2>/dev/null | sha256sum)
run_capture out err rc env -u CI "$WP" transitions --store "$FULL" --manifest one-more.json --ailang-bin "$AILANG_LITE"
is "$rc:$err" "3:world-publish transitions: the registry would hold 1025 descriptors (revision 1 plus this manifest's new ids); at most 1024; nothing was written" "a 1025th descriptor in the registry: refused before the prompt"
is "$(cat "$FULL" "$FULL-wal" 2>/dev/null | sha256sum)" "$b" "... nothing written"
manifest replace.json "$(desc t7 src/echo2.ail)"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --out o --err e --tty t --answer "publish 1 transitions to $FULL" -- "$WP" transitions --store "$FULL" --manifest replace.json --ailang-bin "$AILANG_LITE"
is "$?:$(sed -n 2p o | grep -o "^published transition registry revision [0-9]*")" "0:published transition registry revision 2" "control: replacing one of the 1024 is fine"

# ---- world-publish check: one line per entry, exit 0 only when all pass
manifest mixed.json "$(desc tools.echo src/echo.ail)" "$(desc tools.bad src/world-import.ail)" "$(desc tools.nomain src/nomain.ail)"
run_capture out err rc "$WP" check --manifest mixed.json --ailang-bin "$AILANG_LITE"
is "$rc" 19 "check with one good and two bad entries: exit 19"
is "$(printf '%s' "$out" | wc -l)" 3 "... one line per entry plus the count"
is "$(printf '%s' "$out" | sed -n 1p)" "ok entry \"tools.echo\": would publish as MCP tool tools_decho (transitionFn $SRC1)" "... the good entry"
like "$(printf '%s' "$out" | sed -n 2p)" '^refused entry "tools.bad": source check: .*LDR001' "... the world/* import"
is "$(printf '%s' "$out" | sed -n 4p)" "1 of 3 descriptor(s) would publish" "... and the count"
run_capture out err rc "$WP" check --manifest m1.json --ailang-bin "$AILANG_LITE"
is "$rc" 0 "check of a good manifest: exit 0"
manifest ref.json "{\"id\":\"tools.ref\",\"transitionFn\":\"$SRC1\"}"
run_capture out err rc "$WP" check --manifest ref.json --ailang-bin "$AILANG_LITE"
is "$rc:$out" "4:refused entry \"tools.ref\": transitionFn $SRC1 cannot be resolved without --store DB
0 of 1 descriptor(s) would publish" "check: a transitionFn ref needs --store"
run_capture out err rc "$WP" check --manifest ref.json --ailang-bin "$AILANG_LITE" --store "$DB"
is "$rc" 0 "check --store resolves a stored transitionFn (read only)"

# ---- the semantics epoch: derived, never defaulted
manifest ep2.json "$(desc tools.echo src/echo4.ail '"semanticsEpoch":2')"
refuse "semanticsEpoch 2 against epoch 1" 8 "world-publish transitions: entry \"tools.echo\": semanticsEpoch 2 does not nominate interpreter release \"$REL\" (world/epoch-registry/v1 gives epoch 1)" ep2.json
manifest ep1.json "$(desc tools.echo src/echo4.ail '"semanticsEpoch":1')"
publish_tty "$(phrase 1)" ep1.json
H8=$("$SQL" -readonly "$DB" "SELECT ref FROM heads WHERE name = 'world/transition-registry/v1'" 2>/dev/null)
is "$rc:$out" "0:transition registry UNCHANGED at revision 8 (head $H8); nothing written, nothing to confirm
  UNCHANGED tools.echo" "semanticsEpoch 1 given: accepted, no epoch line (nothing was derived)"
publish_tty "$(phrase 1)" m4.json --interpreter-ref "$IREF"
is "$rc" 2 "--ailang-bin and --interpreter-ref together: usage"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --out o --err e --tty t --answer "$(phrase 1)" -- "$WP" transitions --store "$DB" --manifest m4.json --interpreter-ref "$IREF"
is "$?:$(sed -n 2p o)" "0:transition registry UNCHANGED at revision 8 (head $H8); nothing written, nothing to confirm" "--interpreter-ref of the archived interpreter"
run_capture out err rc "$WP" transitions --store "$DB" --manifest m4.json --interpreter-ref sha256:0000000000000000000000000000000000000000000000000000000000000000
is "$rc:$err" "4:world-publish transitions: interpreter sha256:0000000000000000000000000000000000000000000000000000000000000000 is not archived next to the store; give --ailang-bin BIN to archive it" "--interpreter-ref of an interpreter not archived: refused"

NOEP="$T/noep.db"
"$WORLDD" archive --store "$NOEP" --ailang-bin "$AILANG_LITE" > /dev/null
b=$(cat "$NOEP" "$NOEP-wal" 2>/dev/null | sha256sum)
run_capture out err rc env -u CI "$WP" transitions --store "$NOEP" --manifest m1.json --ailang-bin "$AILANG_LITE"
is "$rc:$err" "4:world-publish transitions: interpreter release \"$REL\" is nominated by no epoch in world/epoch-registry/v1 (never defaulted); bootstrap it first: worldd epoch bootstrap --store $NOEP --ailang-bin BIN" "no epoch registry (interpreter archived): refused, never defaulted"
is "$(cat "$NOEP" "$NOEP-wal" 2>/dev/null | sha256sum)" "$b" "... nothing written"
NOEP2="$T/noep2.db"
printf x | "$WORLDD" object put --store "$NOEP2" --semantic-id test/x > /dev/null
run_capture out err rc env -u CI "$WP" transitions --store "$NOEP2" --manifest m1.json --ailang-bin "$AILANG_LITE"
is "$rc:$err" "4:world-publish transitions: this store has no world/epoch-registry/v1 (never defaulted); bootstrap it first: worldd epoch bootstrap --store $NOEP2 --ailang-bin BIN" "no epoch registry (interpreter not archived): refused before archiving"
[ ! -e "$NOEP2.artifacts/interpreters" ]; ok $? "... and the interpreter was not archived"
if [ -n "$SQL" ]; then
  AMB="$T/amb.db"
  "$WORLDD" archive --store "$AMB" --ailang-bin "$AILANG_LITE" > /dev/null
  R=$(printf '{"epochs":[{"epoch":1,"release":"%s"},{"epoch":2,"release":"%s"}]}' "$REL" "$REL" | "$WORLDD" object put --store "$AMB" --semantic-id world/epoch-registry/v1)
  "$SQL" "$AMB" "INSERT INTO heads(name, ref, revision, updated_at) VALUES ('world/epoch-registry/v1', '$R', 1, 0)"
  run_capture out err rc env -u CI "$WP" transitions --store "$AMB" --manifest m1.json --ailang-bin "$AILANG_LITE"
  is "$rc:$err" "8:world-publish transitions: interpreter release \"$REL\" is nominated by more than one epoch in world/epoch-registry/v1; refusing to choose" "an ambiguous epoch: refused"
else
  skip "no sqlite3 shell" "an ambiguous epoch: refused"
fi

# ---- an interpreter not archived yet (same release, other bytes): archived
# after the attended step, refused until admitted to the epoch (worldd epoch
# admit, tests/publish/admit.sh), then named by the new descriptors
cp "$AILANG_LITE" "$T/ailang-copy" && printf 'x' >> "$T/ailang-copy"
IREF2=$("$WORLDD" hash < "$T/ailang-copy")
manifest m5.json "$(desc tools.echo5 src/echo.ail)"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --out o --err e --tty t --answer "$(phrase 1)" -- "$WP" transitions --store "$DB" --manifest m5.json --ailang-bin "$T/ailang-copy"
is "$?:$(cat e)" "8:world-publish transitions: interpreter $IREF2 prints release \"$REL\" of epoch 1, which admits $IREF, not these bytes; admit them attended first: worldd epoch admit --store DB --ailang-bin BIN" "a new interpreter of the same release: refused until admitted"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --out o --err e --tty t --answer "admit $IREF2 to epoch 1" -- "$WORLDD" epoch admit --store "$DB" --ailang-bin "$T/ailang-copy"
is "$?" 0 "... admitted attended (worldd epoch admit)"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --out o --err e --tty t --answer "$(phrase 1)" -- "$WP" transitions --store "$DB" --manifest m5.json --ailang-bin "$T/ailang-copy"
is "$?" 0 "a new interpreter of the same release: published"
[ -x "$DB.artifacts/interpreters/sha256/${IREF2#sha256:}/ailang" ]; ok $? "... and archived next to the store"
"$WORLDD" object get --store "$DB" "$(sed -n 2p o | grep -Eo 'sha256:[0-9a-f]{64}')" --payload > reg9.json
like "$(cat reg9.json)" "\"id\":\"tools.echo5\",\"inputSchema\":\{\"type\":\"object\"\},\"interpreter\":\"$IREF2\"" "... the new descriptor names it"
like "$(cat reg9.json)" "\"id\":\"tools.echo\",\"inputSchema\":\{\"type\":\"object\"\},\"interpreter\":\"$IREF\"" "... the others keep theirs"

# ---- world-publish retire: out of what sessions see, history kept
retire_tty() { # retire_tty ANSWER ID...: through the pty, CI unset
  local answer=$1; shift
  env -u CI -u GITHUB_ACTIONS python3 "$PTY" --out "$T/o" --err "$T/e" --tty "$T/t" --answer "$answer" -- \
    "$WP" retire --store "$DB" "$@"
  rc=$?; out=$(cat "$T/o"); err=$(cat "$T/e"); tty=$(cat "$T/t")
}
read -r HR REVR <<< "$(head_of)"
before=$(dbsum)
run_capture out err rc "$WP" retire --store "$DB" tools.echo5 tools.typo
is "$rc:$err" "4:world-publish retire: \"tools.typo\" is not published in $DB (revision $REVR); nothing was retired" "retire of an id that is not published: exit 4, named"
is "$(dbsum)" "$before" "... the database is byte-identical"
run_capture out err rc env CI=true "$WP" retire --store "$DB" tools.echo5
is "$rc" 20 "retire with CI set: the attended step refuses (exit 20)"
is "$(dbsum)" "$before" "... the database is byte-identical"
retire_tty "retire 1 transitions from /wrong" tools.echo5
is "$rc" 20 "retire with a wrong phrase typed: exit 20"
is "$(dbsum)" "$before" "... the database is byte-identical"
retire_tty "retire 1 transitions from $DB" tools.echo5
is "$rc" 0 "retire attended: exit 0 ($err)"
like "$tty" "to retire 1 transition\(s\) from the LOCAL transition registry" "... the prompt says what it will do"
like "$(printf '%s' "$out" | sed -n 1p)" "^retired from transition registry revision $((REVR + 1)) \(head sha256:[0-9a-f]{64}\);" "... writes the next revision"
is "$(printf '%s' "$out" | sed -n 2p)" "  retired tools.echo5 (MCP tool tools_decho5)" "... one line per id, naming the MCP tool"
read -r HR2 REVR2 <<< "$(head_of)"
"$WORLDD" object get --store "$DB" "$HR2" --payload > regr.json
like "$(cat regr.json)" "\"retired\":\[\{\"id\":\"tools.echo5\",\"revision\":$REVR2\}\]" "the new revision lists tools.echo5 as retired at that revision"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); ids=[t["id"] for t in d["transitions"]]; sys.exit(0 if "tools.echo5" not in ids and "tools.echo" in ids else 1)' regr.json
ok $? "... its transitions no longer hold tools.echo5, the others stay"
"$WORLDD" object get --store "$DB" "$HR" --payload > regr0.json
like "$(cat regr0.json)" '"id":"tools.echo5"' "... and the earlier revision still holds its descriptor (history kept)"
before=$(dbsum)
run_capture out err rc env CI=true setsid "$WP" retire --store "$DB" tools.echo5 </dev/null
is "$rc:$out" "0:transition registry UNCHANGED at revision $REVR2 (head $HR2); nothing written, nothing to confirm
  UNCHANGED tools.echo5 (retired at revision $REVR2)" "retiring it again: UNCHANGED, nothing asked even with CI set"
is "$(dbsum)" "$before" "... the database is byte-identical"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --out o --err e --tty t --answer "$(phrase 1)" -- "$WP" transitions --store "$DB" --manifest m5.json --ailang-bin "$T/ailang-copy"
rc=$?; out=$(cat o); err=$(cat e)
is "$rc" 0 "publishing the retired id again: exit 0 ($err)"
like "$out" "  new tools.echo5 \(retired at revision $REVR2; published again\)" "... its line says it was retired and is live again"
read -r HR3 REVR3 <<< "$(head_of)"
"$WORLDD" object get --store "$DB" "$HR3" --payload > regr3.json
like "$(cat regr3.json)" '"id":"tools.echo5"' "... the registry holds it again"
unlike "$(cat regr3.json)" '"retired"' "... and its retired list is gone (nothing else was retired)"

# ---- the packages of this repository (paths relative to the repository root)
for pkg in quickstart se-tools; do
  if [ -f "$top_srcdir/packages/$pkg/transitions.json" ]; then
    run_capture out err rc bash -c "cd '$top_srcdir' && '$WP' check --manifest packages/$pkg/transitions.json --ailang-bin '$AILANG_LITE'"
    is "$rc" 0 "packages/$pkg: every descriptor would publish"
  else
    skip "packages/$pkg absent" "packages/$pkg would publish"
  fi
done
if [ -f "$top_srcdir/packages/quickstart/transitions.json" ]; then
  DB="$T/q.db"
  "$WORLDD" epoch bootstrap --store "$DB" --ailang-bin "$AILANG_LITE" > /dev/null
  (cd "$top_srcdir" && env -u CI -u GITHUB_ACTIONS python3 "$PTY" --out "$T/o" --err "$T/e" --tty "$T/t" --answer "$(phrase 1)" -- \
    "$WP" transitions --store "$DB" --manifest packages/quickstart/transitions.json --ailang-bin "$AILANG_LITE")
  is "$?" 0 "packages/quickstart publishes into a fresh store"
  like "$(cat "$T/o")" "^published transition registry revision 1 " "... as revision 1"
else
  skip "packages/quickstart absent" "quickstart publishes"; skip "packages/quickstart absent" "... as revision 1"
fi
done_testing
