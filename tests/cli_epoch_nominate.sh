#!/bin/bash
# worldd epoch nominate (issue 24 items 2 and 8): a second interpreter
# release (ailang-lite's bytes with its release line patched to v0.2.0) on a
# store bootstrapped for the first. Before: publish and serve refuse it,
# pointing to nominate (never to bootstrap), and the refused publish has
# archived nothing. Nominate is attended (CI, a wrong phrase refuse;
# confirmed through a pseudo-terminal with CI removed from the child's
# environment); a missing store is exit 4 with nothing created. After it:
# publish derives epoch 2, serve starts and worldd call runs with the new
# interpreter (its log entry on epoch 2). A failed
# epoch bootstrap leaves no store behind.
. "$top_srcdir/tests/tap.sh"
WP="$top_builddir/cli/world-publish"
PTY="$top_srcdir/tests/publish/pty.py"
T=$(mktemp -d /tmp/world-nominate.XXXXXX)
DPID=""
trap '[ -n "$DPID" ] && kill -KILL "$DPID" 2>/dev/null; rm -rf "$T"' EXIT
cd "$T" || bail "cd $T"
DB="$T/w.db"
SQL=${SQLITE3_SHELL:-}
REL=$("$AILANG_LITE" --version | head -n1)
python3 -c "import sys; d=open(sys.argv[1],'rb').read(); assert d.count(b'AILANG-lite v0.1.0')>=1; open(sys.argv[2],'wb').write(d.replace(b'AILANG-lite v0.1.0', b'AILANG-lite v0.2.0'))" "$AILANG_LITE" "$T/lite2"
chmod 0755 "$T/lite2"
L2="$T/lite2"
REL2=$("$L2" --version | head -n1)
R2=$("$WORLDD" hash < "$L2")
like "$REL2" '^AILANG-lite v0\.2\.0 ' "the second interpreter prints another release ($REL2)"
artifacts() { find "$DB.artifacts" -type f 2>/dev/null | sort | sha256sum; }
interps() { [ -n "$SQL" ] && "$SQL" -readonly "$DB" "SELECT count(*) FROM interpreters"; }

# ---- a failed bootstrap leaves no store
for bad in /bin/ls "$T/absent-bin"; do
  run_capture out err rc "$WORLDD" epoch bootstrap --store "$T/b.db" --ailang-bin "$bad"
  [ "$rc" != 0 ]; ok $? "bootstrap with $bad: refused (exit $rc)"
  is "$(ls -d "$T"/b.db* 2>/dev/null | wc -l)" 0 "... no b.db, b.db-wal, b.db-shm or b.db.artifacts left"
done

# ---- nominate: store absent, no registry
run_capture out err rc "$WORLDD" epoch nominate --store "$T/typo.db" --ailang-bin "$L2"
is "$rc" 4 "nominate on a missing store: exit 4"
like "$err" "typo.db: No such file or directory; nothing created" "... says nothing was created"
is "$(ls -d "$T"/typo.db* 2>/dev/null | wc -l)" 0 "... and nothing was"
"$WORLDD" archive --store "$T/noreg.db" --ailang-bin "$AILANG_LITE" > /dev/null
run_capture out err rc env -u CI "$WORLDD" epoch nominate --store "$T/noreg.db" --ailang-bin "$L2"
is "$rc" 4 "nominate without an epoch registry: exit 4"
like "$err" "worldd epoch bootstrap --store DB --ailang-bin BIN" "... points to bootstrap"

# ---- bootstrapped for release 1: release 2 is refused, pointing to nominate
"$WORLDD" epoch bootstrap --store "$DB" --ailang-bin "$AILANG_LITE" > /dev/null
mkdir -p src
printf 'module echo\nexport func main(input: string) -> string { "{\\"echo\\":${input}}" }\n' > src/echo.ail
printf '[{"id":"tools.echo","title":"Echo","description":"echoes","transitionFnFile":"src/echo.ail","inputSchema":{"type":"object"},"outputSchema":{"type":"object"},"access":null,"declaredEffects":[]}]\n' > m1.json
publish_tty() { # publish_tty BIN: through the pty, CI unset, typing the phrase
  env -u CI -u GITHUB_ACTIONS python3 "$PTY" --out "$T/o" --err "$T/e" --tty "$T/t" --answer "publish 1 transitions to $DB" -- \
    "$WP" transitions --store "$DB" --manifest m1.json --ailang-bin "$1"
  rc=$?; out=$(cat "$T/o"); err=$(cat "$T/e")
}
a0=$(artifacts); i0=$(interps)
publish_tty "$L2"
is "$rc" 4 "publish with the unnominated release: exit 4"
is "$err" "world-publish transitions: interpreter release \"$REL2\" is nominated by no epoch in world/epoch-registry/v1 (never defaulted); nominate it as the next epoch first, attended: worldd epoch nominate --store $DB --ailang-bin BIN" "... points to nominate"
is "$(cat "$T/t")" "" "... refused before the attended step (no prompt)"
is "$(artifacts)" "$a0" "... the archive directory is unchanged"
[ -z "$SQL" ] || is "$(interps)" "$i0" "... the interpreter table is unchanged"
[ ! -e "$DB.artifacts/interpreters/sha256/${R2#sha256:}" ]; ok $? "... no directory for its bytes"
run_capture out err rc "$WORLDD" serve --store "$DB" --ailang-bin "$L2" --listen 127.0.0.1:0
is "$rc" 8 "serve with the unnominated release: exit 8"
like "$err" "worldd epoch nominate --store DB --ailang-bin BIN" "... points to nominate"
run_capture out err rc "$WORLDD" epoch bootstrap --store "$DB" --ailang-bin "$L2"
like "$rc:$err" "^8:.*worldd epoch nominate --store DB --ailang-bin BIN" "bootstrap with release 2: refused, pointing to nominate"

# ---- nominate is attended (serve and bootstrap above archived BIN: they
# archive at start, before the epoch check)
a1=$(artifacts); i1=$(interps)
run_capture out err rc env CI=true "$WORLDD" epoch nominate --store "$DB" --ailang-bin "$L2"
is "$rc" 20 "nominate with CI=true: exit 20"
is "$(printf '%s' "$err" | head -n1)" "STOP fence=ci reason=ci" "... STOP fence=ci"
run_capture out err rc env -u CI -u GITHUB_ACTIONS "$WORLDD" epoch nominate --store "$DB" --ailang-bin "$L2" < /dev/null
is "$rc" 20 "nominate without a terminal: exit 20"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --out "$T/o" --err "$T/e" --tty "$T/t" --answer "nominate $REL2 as epoch 3" -- \
  "$WORLDD" epoch nominate --store "$DB" --ailang-bin "$L2"
rc=$?
is "$rc" 20 "a wrong phrase: exit 20"
is "$(head -n1 "$T/e")" "STOP fence=confirmation reason=mismatch" "... STOP fence=confirmation"
run_capture out err rc "$WORLDD" epoch show --store "$DB" --json
like "$out" "\"revision\":1}\$" "... the registry is still revision 1"
rm -rf "$DB.artifacts/interpreters/sha256/${R2#sha256:}"
[ -z "$SQL" ] || "$SQL" "$DB" "DELETE FROM interpreters WHERE ref = '$R2'"
a1=$(artifacts); i1=$(interps)
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --out "$T/o" --err "$T/e" --tty "$T/t" --answer "nominate $REL2 as epoch 9" -- \
  "$WORLDD" epoch nominate --store "$DB" --ailang-bin "$L2"
is "$?:$(artifacts)" "20:$a1" "... and a refused nominate archives nothing"
[ -z "$SQL" ] || is "$(interps)" "$i1" "... nor records it"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --out "$T/o" --err "$T/e" --tty "$T/t" --answer "nominate $REL2 as epoch 2" -- \
  "$WORLDD" epoch nominate --store "$DB" --ailang-bin "$L2"
rc=$?
is "$rc" 0 "nominate, typed at the terminal: exit 0"
is "$(sed -n 3p "$T/t")" "  nominate $REL2 as epoch 2" "... the phrase names the release and epoch 2"
grep -qF "nominated interpreter release \"$REL2\" as epoch 2 (interpreter $R2 admitted); world/epoch-registry/v1 head sha256:" "$T/o"; ok $? "... its line"
run_capture out err rc "$WORLDD" epoch show --store "$DB"
is "$(printf '%s' "$out" | sed -n 4,5p)" "$(printf '  epoch 2: interpreter release "%s"\n    admits %s (attended)' "$REL2" "$R2")" "epoch show: epoch 2 admits the new bytes"
[ -x "$DB.artifacts/interpreters/sha256/${R2#sha256:}/ailang" ]; ok $? "control: the confirmed interpreter is archived (the archive check sees it)"
run_capture out err rc "$WORLDD" epoch nominate --store "$DB" --ailang-bin "$L2"
is "$rc:$out" "0:world/epoch-registry/v1 already nominates interpreter release \"$REL2\" as epoch 2, which admits interpreter $R2; unchanged" "a second nominate: unchanged, no prompt"

# ---- publish and serve with the new interpreter
publish_tty "$L2"
is "$rc" 0 "publish with the nominated release"
printf '%s\n' "$out" | grep -qxF "semantics epoch 2 derived from world/epoch-registry/v1 for interpreter release \"$REL2\""; ok $? "... derives epoch 2"
: > "$T/sout"
"$WORLDD" serve --store "$DB" --ailang-bin "$L2" --listen 127.0.0.1:0 >"$T/sout" 2>"$T/serr" &
DPID=$!
up=1
for _ in $(seq 1 300); do
  grep -q '^worldd listening on ' "$T/sout" && { up=0; break; }
  kill -0 "$DPID" 2>/dev/null || break
  sleep 0.1
done
is "$up" 0 "serve with the new interpreter starts"
like "$(cat "$T/serr" "$T/sout")" "epoch=2" "... on epoch 2"
kill -TERM "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null; DPID=""
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '[y/N] ' --answer y --out "$T/mint.out" --err "$T/mint.err" \
  --tty "$T/mint.tty" -- "$WORLDD" session mint --store "$DB" --episode ep1 --grant Test.Echo=s:1 || bail "mint: $(cat "$T/mint.err")"
cred=$(cat "$T/mint.out")
run_capture out err rc "$WORLDD" call --store "$DB" --session "$cred" tools.echo --json '{"n":1}'
is "$rc" 0 "worldd call runs the transition published with the new interpreter"
like "$out" '"echo":\{"n":1\}' "... its output"
run_capture out err rc "$WORLDD" log get --store "$DB" 1
like "$out" "\"semanticsEpoch\":2|\"epoch\":2" "... its log entry names epoch 2"
done_testing
