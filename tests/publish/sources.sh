#!/bin/bash
# Where world-publish reads a relative transitionFnFile (issue 39 item 1,
# docs/publishing.md): from the current directory, as the reference defines
# it, so a repository laid out as the reference's is published from its
# root; from the manifest's directory only with --sources-relative-to
# manifest, never by a guess between the two. A source that cannot be read
# is one line naming the manifest, the entry id and the path tried. The
# typed confirmation goes through a pseudo-terminal (tests/publish/pty.py)
# with CI removed from that child's environment only.
. "$top_srcdir/tests/tap.sh"
WP="$top_builddir/cli/world-publish"
PTY="$top_srcdir/tests/publish/pty.py"
T=$(mktemp -d /tmp/world-sources.XXXXXX)
trap 'rm -rf "$T"' EXIT
T=$(cd "$T" && pwd -P) # the paths a refusal names are absolute and resolved
DB="$T/w.db"
SQL=${SQLITE3_SHELL:-}
dbsum() { cat "$DB" "$DB-wal" 2>/dev/null | sha256sum | cut -d' ' -f1; }

# ---- a repository laid out as the reference's: the manifest at
# packages/x/transitions.json names its sources relative to the root
R="$T/repo"
mkdir -p "$R/packages/x/x_tools"
cat > "$R/packages/x/x_tools/read.ail" <<'AIL'
module read
export func main(input: string) -> string { "{\"read\":${input}}" }
AIL
cat > "$R/packages/x/x_tools/echo.ail" <<'AIL'
module echo
export func main(input: string) -> string { "{\"echo\":${input}}" }
AIL
desc() { # desc ID FILE
  printf '{"id":"%s","title":"%s","description":"a fixture","transitionFnFile":"%s","inputSchema":{"type":"object"},"outputSchema":{"type":"object"},"access":null,"declaredEffects":[]}' "$1" "$1" "$2"
}
printf '[%s,%s]\n' "$(desc x.read packages/x/x_tools/read.ail)" "$(desc x.echo packages/x/x_tools/echo.ail)" \
  > "$R/packages/x/transitions.json"
# the same package naming its sources relative to the manifest (the flag's form)
printf '[%s,%s]\n' "$(desc x.read x_tools/read.ail)" "$(desc x.echo x_tools/echo.ail)" > "$R/packages/x/local.json"
READ=$("$WORLDD" hash < "$R/packages/x/x_tools/read.ail")
ECHO=$("$WORLDD" hash < "$R/packages/x/x_tools/echo.ail")
"$WORLDD" epoch bootstrap --store "$DB" --ailang-bin "$AILANG_LITE" > /dev/null || bail "epoch bootstrap"
REL=$("$AILANG_LITE" --version | head -n1)

# ---- check from the root: the reference's outcome lines
run_capture out err rc bash -c "cd '$R' && '$WP' check --manifest packages/x/transitions.json --ailang-bin '$AILANG_LITE'"
is "$rc:$err" "0:" "check from the repository root: exit 0"
is "$out" "ok entry \"x.read\": would publish as MCP tool x_dread (transitionFn $READ)
ok entry \"x.echo\": would publish as MCP tool x_decho (transitionFn $ECHO)
2 of 2 descriptor(s) would publish" "... one ok line per entry, the sources read from the root"

# ---- publish from the root, unmodified (attended, through the pty)
b=$(dbsum)
(cd "$R" && env -u CI -u GITHUB_ACTIONS python3 "$PTY" --out "$T/o" --err "$T/e" --tty "$T/t" \
  --answer "publish 2 transitions to $DB" -- \
  "$WP" transitions --store "$DB" --manifest packages/x/transitions.json --ailang-bin "$AILANG_LITE")
rc=$?; out=$(cat "$T/o"); err=$(cat "$T/e")
is "$rc:$err" "0:" "publish from the repository root: exit 0"
is "$(printf '%s' "$out" | sed -n 1p)" "semantics epoch 1 derived from world/epoch-registry/v1 for interpreter release \"$REL\"" "... the epoch line"
like "$(printf '%s' "$out" | sed -n 2p)" "^published transition registry revision 1 \(head sha256:[0-9a-f]{64}\); the daemon's A2A card will list these skills on its next read$" "... published revision 1"
is "$(printf '%s' "$out" | sed -n '3,$p')" "  new x.read
  new x.echo" "... and one line per descriptor"
H1=$(printf '%s' "$out" | sed -n 2p | grep -Eo 'sha256:[0-9a-f]{64}')
"$WORLDD" object get --store "$DB" "$H1" --payload > "$T/reg1.json"
like "$(cat "$T/reg1.json")" "\"id\":\"x.echo\",.*\"transitionFn\":\"$ECHO\"" "... x.echo's descriptor names the root-relative source's bytes"
like "$(cat "$T/reg1.json")" "\"id\":\"x.read\",.*\"transitionFn\":\"$READ\"" "... and x.read's"
run_capture o e r "$WORLDD" object get --store "$DB" "$READ"
like "$o" '"semanticId":"world/transition-source/v1"' "... the source is stored"

# ---- the same manifest from elsewhere: the current directory is the rule
b=$(dbsum)
run_capture out err rc bash -c "cd '$T' && env -u CI -u GITHUB_ACTIONS '$WP' transitions --store '$DB' --manifest repo/packages/x/transitions.json --ailang-bin '$AILANG_LITE'"
is "$rc" 4 "control: the same manifest published from another directory: exit 4 (its paths are relative to the current directory)"
is "$(printf '%s' "$err" | sed -n 1p)" "world-publish transitions: entry \"x.read\": transitionFnFile \"packages/x/x_tools/read.ail\" of manifest \"repo/packages/x/transitions.json\": open $T/packages/x/x_tools/read.ail: No such file or directory" \
  "... one line naming the manifest, the entry id and the path tried"
is "$(printf '%s' "$err" | grep -c 'x_tools/read.ail')" 1 "... x.read's refusal is that one line"
is "$(printf '%s' "$err" | sed -n '$p')" "world-publish transitions: 2 of 2 descriptor(s) refused; nothing was written" "... then the count"
is "$(dbsum)" "$b" "... nothing written"

# ---- a missing file, from the root
printf '[%s]\n' "$(desc x.nope packages/x/x_tools/nope.ail)" > "$R/packages/x/missing.json"
b=$(dbsum)
run_capture out err rc bash -c "cd '$R' && env -u CI -u GITHUB_ACTIONS '$WP' transitions --store '$DB' --manifest packages/x/missing.json --ailang-bin '$AILANG_LITE'"
is "$rc" 4 "a missing source file: exit 4"
is "$err" "world-publish transitions: entry \"x.nope\": transitionFnFile \"packages/x/x_tools/nope.ail\" of manifest \"packages/x/missing.json\": open $R/packages/x/x_tools/nope.ail: No such file or directory
world-publish transitions: 1 of 1 descriptor(s) refused; nothing was written" \
  "... one line naming the manifest, the entry id and the path tried (then the count)"
is "$out" "" "... nothing on stdout"
is "$(dbsum)" "$b" "... nothing written"
run_capture out err rc bash -c "cd '$R' && '$WP' check --manifest packages/x/missing.json --ailang-bin '$AILANG_LITE'"
is "$rc:$(printf '%s' "$out" | sed -n 1p)" "4:refused entry \"x.nope\": transitionFnFile \"packages/x/x_tools/nope.ail\" of manifest \"packages/x/missing.json\": open $R/packages/x/x_tools/nope.ail: No such file or directory" \
  "... check says the same in its refused line"

# ---- an absolute path: read as given, from anywhere
printf '[%s]\n' "$(desc x.abs "$R/packages/x/x_tools/read.ail")" > "$T/abs.json"
run_capture out err rc bash -c "cd / && '$WP' check --manifest '$T/abs.json' --ailang-bin '$AILANG_LITE'"
is "$rc:$(printf '%s' "$out" | sed -n 1p)" "0:ok entry \"x.abs\": would publish as MCP tool x_dabs (transitionFn $READ)" "an absolute transitionFnFile is read as given (control)"
printf '[%s]\n' "$(desc x.abs "$R/packages/x/x_tools/gone.ail")" > "$T/absgone.json"
b=$(dbsum)
run_capture out err rc bash -c "cd / && env -u CI -u GITHUB_ACTIONS '$WP' transitions --store '$DB' --manifest '$T/absgone.json' --ailang-bin '$AILANG_LITE'"
is "$rc" 4 "an absolute path to a missing file: exit 4"
is "$err" "world-publish transitions: entry \"x.abs\": transitionFnFile \"$R/packages/x/x_tools/gone.ail\" of manifest \"$T/absgone.json\": open $R/packages/x/x_tools/gone.ail: No such file or directory
world-publish transitions: 1 of 1 descriptor(s) refused; nothing was written" \
  "... one line naming the manifest, the entry id and the path tried (then the count)"
is "$(dbsum)" "$b" "... nothing written"

# ---- --sources-relative-to manifest: the explicit other rule
run_capture out err rc bash -c "cd / && '$WP' check --manifest '$R/packages/x/local.json' --ailang-bin '$AILANG_LITE' --sources-relative-to manifest"
is "$rc:$(printf '%s' "$out" | sed -n '$p')" "0:2 of 2 descriptor(s) would publish" \
  "--sources-relative-to manifest: paths relative to the manifest's directory, from any directory (/)"
is "$(printf '%s' "$out" | sed -n 1p)" "ok entry \"x.read\": would publish as MCP tool x_dread (transitionFn $READ)" "... the same source bytes as from the root"
run_capture out err rc bash -c "cd '$R' && '$WP' check --manifest packages/x/local.json --ailang-bin '$AILANG_LITE'"
is "$rc:$(printf '%s' "$out" | sed -n 1p)" "4:refused entry \"x.read\": transitionFnFile \"x_tools/read.ail\" of manifest \"packages/x/local.json\": open $R/x_tools/read.ail: No such file or directory (relative to the manifest's directory it is $R/packages/x/x_tools/read.ail: give --sources-relative-to manifest)" \
  "control: without the flag the same manifest is refused (never guessed), the line saying where the file is and which flag reads it"
run_capture out err rc bash -c "cd '$R' && '$WP' check --manifest packages/x/transitions.json --ailang-bin '$AILANG_LITE' --sources-relative-to manifest"
is "$rc:$(printf '%s' "$out" | sed -n 1p)" "4:refused entry \"x.read\": transitionFnFile \"packages/x/x_tools/read.ail\" of manifest \"packages/x/transitions.json\": open $R/packages/x/packages/x/x_tools/read.ail: No such file or directory (relative to the current directory it is $R/packages/x/x_tools/read.ail: drop --sources-relative-to manifest)" \
  "... and the flag on a root-relative manifest is refused the other way round"
run_capture out err rc bash -c "cd '$R' && '$WP' check --manifest packages/x/transitions.json --ailang-bin '$AILANG_LITE' --sources-relative-to cwd"
is "$rc:$(printf '%s' "$out" | sed -n '$p')" "0:2 of 2 descriptor(s) would publish" "--sources-relative-to cwd is the default, given explicitly"
# published with the flag from another directory: the same descriptors as
# revision 1, so nothing is written and nothing asked (CI set, no terminal)
b=$(dbsum)
run_capture out err rc bash -c "cd / && env CI=1 setsid '$WP' transitions --store '$DB' --manifest '$R/packages/x/local.json' --ailang-bin '$AILANG_LITE' --sources-relative-to manifest </dev/null"
is "$rc:$err" "0:" "transitions --sources-relative-to manifest from / : exit 0"
is "$(printf '%s' "$out" | sed -n '2,$p')" "transition registry UNCHANGED at revision 1 (head $H1); nothing written, nothing to confirm
  UNCHANGED x.read
  UNCHANGED x.echo" "... the same sources as the root-relative publish: UNCHANGED"
is "$(dbsum)" "$b" "... the database byte-identical"

# ---- the flag's values
run_capture out err rc "$WP" check --manifest "$R/packages/x/local.json" --sources-relative-to here
is "$rc:$err" "2:world-publish check: usage: --sources-relative-to takes cwd or manifest, not 'here' (see world-publish --help)" "an unknown --sources-relative-to value: usage"
run_capture out err rc "$WP" check --manifest - --sources-relative-to manifest < "$R/packages/x/local.json"
is "$rc:$err" "2:world-publish check: usage: --sources-relative-to manifest needs a manifest file: a manifest on stdin has no directory (see world-publish --help)" \
  "--sources-relative-to manifest with --manifest -: usage (stdin has no directory)"
run_capture out err rc bash -c "cd '$R' && '$WP' check --manifest - --ailang-bin '$AILANG_LITE' < packages/x/transitions.json"
is "$rc:$(printf '%s' "$out" | sed -n '$p')" "0:2 of 2 descriptor(s) would publish" "a manifest on stdin: paths relative to the current directory"
run_capture out err rc "$WP" transitions --store "$DB" --manifest "$R/packages/x/local.json" --sources-relative-to manifest --sources-relative-to cwd
is "$rc" 2 "--sources-relative-to given twice: usage"
like "$("$WP" --help)" "A relative transitionFnFile is read from the current directory" "world-publish --help says where relative sources are read from"
done_testing
