#!/bin/bash
# Interpreters admitted by bytes (issue 23 item 7, coordinator/registry.h):
# tests/publish/fake-interp prints ailang-lite's own --version line and
# answers `check` with ok. Under the release-string rule it was admitted to
# epoch 1; now worldd serve, world-publish transitions and worldd epoch
# bootstrap refuse it (exit 8, one line naming both hashes) and the real
# binary is accepted (control), until `worldd epoch admit` -- attended,
# refused with CI set, confirmed through a pseudo-terminal with CI removed
# from the child's environment -- records it; then it is accepted and
# `worldd epoch show` lists the admission. A registry written before the
# admission lists is upgraded by the first writer (legacy rule).
. "$top_srcdir/tests/tap.sh"
WP="$top_builddir/cli/world-publish"
FAKE="$top_builddir/tests/publish/fake-interp"
PTY="$top_srcdir/tests/publish/pty.py"
T=$(mktemp -d /tmp/world-admit.XXXXXX)
DPID=""
trap '[ -n "$DPID" ] && kill -KILL "$DPID" 2>/dev/null; rm -rf "$T"' EXIT
cd "$T" || bail "cd $T"
DB="$T/w.db"
SQL=${SQLITE3_SHELL:-}
REL=$("$AILANG_LITE" --version | head -n1)
IREF=$("$WORLDD" hash < "$AILANG_LITE")
FREF=$("$WORLDD" hash < "$FAKE")
is "$("$FAKE" --version)" "$REL" "the impostor prints the real --version line"
[ "$IREF" != "$FREF" ]; ok $? "... from other bytes ($FREF)"
dbsum() { cat "$DB" "$DB-wal" 2>/dev/null | sha256sum | cut -d' ' -f1; }
REFUSE="interpreter $FREF prints release \"$REL\" of epoch 1, which admits $IREF, not these bytes; admit them attended first: worldd epoch admit --store DB --ailang-bin BIN"

mkdir -p src
printf 'module echo\nexport func main(input: string) -> string { "{\\"echo\\":${input}}" }\n' > src/echo.ail
printf '[{"id":"tools.echo","title":"Echo","description":"echoes","transitionFnFile":"src/echo.ail","inputSchema":{"type":"object"},"outputSchema":{"type":"object"},"access":null,"declaredEffects":[]}]\n' > m1.json
publish_tty() { # publish_tty DB BIN: through the pty, CI unset, typing the phrase
  env -u CI -u GITHUB_ACTIONS python3 "$PTY" --out "$T/o" --err "$T/e" --tty "$T/t" --answer "publish 1 transitions to $1" -- \
    "$WP" transitions --store "$1" --manifest m1.json --ailang-bin "$2"
  rc=$?; out=$(cat "$T/o"); err=$(cat "$T/e")
}
serve_starts() { # serve_starts BIN: worldd serve comes up (then SIGTERM)
  : > "$T/sout"; : > "$T/serr"
  "$WORLDD" serve --store "$DB" --ailang-bin "$1" --listen 127.0.0.1:0 >"$T/sout" 2>"$T/serr" &
  DPID=$!
  local up=1
  for _ in $(seq 1 300); do
    grep -q '^worldd listening on ' "$T/sout" && { up=0; break; }
    kill -0 "$DPID" 2>/dev/null || break
    sleep 0.1
  done
  if [ "$up" = 0 ]; then
    URL=$(sed -n 's/^worldd listening on //p' "$T/sout")
    curl -sS -m 10 -o /dev/null -w '%{http_code}' "$URL/v1/health" > "$T/health" 2>/dev/null
  fi
  kill -TERM "$DPID" 2>/dev/null
  wait "$DPID" 2>/dev/null
  DPID=""
  return $up
}

# ---- bootstrap with the real binary: its bytes are admitted
run_capture out err rc "$WORLDD" epoch bootstrap --store "$DB" --ailang-bin "$AILANG_LITE"
is "$rc" 0 "bootstrap with the real interpreter"
run_capture out err rc "$WORLDD" epoch show --store "$DB"
is "$(printf '%s' "$out" | sed -n 3p)" "    admits $IREF (bootstrap)" "epoch show: the bootstrap admission"

# ---- the impostor is refused at serve start, publish and bootstrap
before=$(dbsum)
run_capture out err rc "$WORLDD" serve --store "$DB" --ailang-bin "$FAKE" --listen 127.0.0.1:0
is "$rc" 8 "serve with the impostor: exit 8 (the epoch refusal's code)"
is "$err" "worldd serve: $REFUSE" "... one line naming both hashes"
run_capture out err rc env -u CI "$WP" transitions --store "$DB" --manifest m1.json --ailang-bin "$FAKE"
is "$rc:$err" "8:world-publish transitions: $REFUSE" "publish with the (now archived) impostor: refused before the attended step"
run_capture out err rc "$WORLDD" epoch bootstrap --store "$DB" --ailang-bin "$FAKE"
is "$rc:$err" "8:worldd epoch bootstrap: $REFUSE" "epoch bootstrap with the impostor: refused"
run_capture out err rc "$WORLDD" epoch show --store "$DB" --json
like "$out" "\"revision\":1}\$" "... the registry is still revision 1"
like "$out" "^\\{\"epochs\":\\[\\{\"epoch\":1,\"interpreters\":\\[\\{\"admission\":\"bootstrap\",\"ref\":\"$IREF\"\\}\\]," "... admitting the real bytes only"
# a store the impostor was never archived next to: refused after the attended step
DB2="$T/w2.db"
"$WORLDD" epoch bootstrap --store "$DB2" --ailang-bin "$AILANG_LITE" > /dev/null
publish_tty "$DB2" "$FAKE"
is "$rc:$err" "8:world-publish transitions: $REFUSE" "publish with a never-archived impostor: refused after archiving it"
run_capture out err rc "$SQL" -readonly "$DB2" "SELECT count(*) FROM heads WHERE name = 'world/transition-registry/v1'"
[ -z "$SQL" ] || is "$out" 0 "... nothing was published"

# ---- control: the real binary is accepted
serve_starts "$AILANG_LITE"; ok $? "control: serve with the real interpreter starts"
is "$(cat "$T/health")" 200 "... and answers health"
publish_tty "$DB2" "$AILANG_LITE"
is "$rc" 0 "control: publish with the real interpreter"

# ---- worldd epoch admit: attended
run_capture out err rc env CI=1 "$WORLDD" epoch admit --store "$DB" --ailang-bin "$FAKE"
is "$rc" 20 "epoch admit with CI set: exit 20"
is "$(printf '%s' "$err" | head -n1)" "STOP fence=ci reason=ci" "... STOP fence=ci"
run_capture out err rc env -u CI -u GITHUB_ACTIONS "$WORLDD" epoch admit --store "$DB" --ailang-bin "$FAKE" < /dev/null
is "$rc" 20 "epoch admit without a terminal: exit 20"
run_capture out err rc "$WORLDD" epoch show --store "$DB" --json
like "$out" "\"revision\":1}\$" "... nothing admitted"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --out "$T/o" --err "$T/e" --tty "$T/t" --answer "admit $FREF to epoch 2" -- \
  "$WORLDD" epoch admit --store "$DB" --ailang-bin "$FAKE"
rc=$?
is "$rc" 20 "a wrong phrase: exit 20"
is "$(head -n1 "$T/e")" "STOP fence=confirmation reason=mismatch" "... STOP fence=confirmation"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --out "$T/o" --err "$T/e" --tty "$T/t" --answer "admit $FREF to epoch 1" -- \
  "$WORLDD" epoch admit --store "$DB" --ailang-bin "$FAKE"
rc=$?
is "$rc" 0 "epoch admit, typed at the terminal: exit 0"
is "$(cat "$T/t")" "$(printf 'Interpreter %s (%s) prints release "%s" of epoch 1, which admits %s.\nType exactly, to admit these new bytes to epoch 1 of %s:\n  admit %s to epoch 1\n> admit %s to epoch 1' "$FAKE" "$FREF" "$REL" "$IREF" "$DB" "$FREF" "$FREF")" "... the prompt names both hashes"
is "$(sed 's/head sha256:[0-9a-f]\{64\}$/head H/' "$T/o")" "admitted interpreter $FREF to epoch 1 (release \"$REL\") beside $IREF; world/epoch-registry/v1 head H" "... its line"
run_capture out err rc "$WORLDD" epoch show --store "$DB"
like "$out" "revision 2 " "epoch show: revision 2"
is "$(printf '%s' "$out" | sed -n 4p)" "    admits $FREF (attended)" "... lists the attended admission"
run_capture out err rc "$WORLDD" epoch admit --store "$DB" --ailang-bin "$FAKE"
is "$rc:$out" "0:interpreter $FREF is already admitted to epoch 1 (release \"$REL\"); unchanged" "a second admit: unchanged, no prompt"

# ---- after admission the impostor is accepted
serve_starts "$FAKE"; ok $? "serve with the admitted impostor starts"
publish_tty "$DB" "$FAKE"
is "$rc" 0 "publish with the admitted impostor"
run_capture out err rc "$WORLDD" epoch bootstrap --store "$DB" --ailang-bin "$FAKE"
is "$rc" 0 "bootstrap with the admitted impostor: unchanged"

# ---- a registry from before the admission lists (legacy): the first writer upgrades it
if [ -n "$SQL" ]; then
  DB="$T/old.db"
  "$WORLDD" archive --store "$DB" --ailang-bin "$AILANG_LITE" > /dev/null
  R=$(printf '{"epochs":[{"epoch":1,"release":"%s"}]}' "$REL" | "$WORLDD" object put --store "$DB" --semantic-id world/epoch-registry/v1)
  "$SQL" "$DB" "INSERT INTO heads(name, ref, revision, updated_at) VALUES ('world/epoch-registry/v1', '$R', 1, 0)"
  run_capture out err rc "$WORLDD" epoch show --store "$DB"
  is "$(printf '%s' "$out" | sed -n 3p)" "    (no admission list: the first writer upgrades it, coordinator/registry.h)" "legacy registry: shown without a list"
  run_capture out err rc "$WORLDD" epoch bootstrap --store "$DB" --ailang-bin "$AILANG_LITE"
  is "$rc" 0 "legacy registry, no published transition: the first binary checked is admitted"
  run_capture out err rc "$WORLDD" epoch show --store "$DB"
  is "$(printf '%s' "$out" | sed -n 1,3p | sed 's/(head [^)]*)//')" "$(printf 'world/epoch-registry/v1 revision 2 \n  epoch 1: interpreter release "%s"\n    admits %s (upgrade)' "$REL" "$IREF")" "... as an upgrade (revision 2)"
  run_capture out err rc "$WORLDD" serve --store "$DB" --ailang-bin "$FAKE" --listen 127.0.0.1:0
  is "$rc:$err" "8:worldd serve: $REFUSE" "... then the impostor is refused"
  # legacy with published descriptors: their interpreter is what is admitted, not the binary presented
  DB="$T/old2.db"
  "$WORLDD" archive --store "$DB" --ailang-bin "$AILANG_LITE" > /dev/null
  R=$(printf '{"epochs":[{"epoch":1,"release":"%s"}]}' "$REL" | "$WORLDD" object put --store "$DB" --semantic-id world/epoch-registry/v1)
  "$SQL" "$DB" "INSERT INTO heads(name, ref, revision, updated_at) VALUES ('world/epoch-registry/v1', '$R', 1, 0)"
  publish_tty "$DB" "$AILANG_LITE"
  is "$rc" 0 "legacy registry: publish with the real interpreter (upgrades, then admits)"
  run_capture out err rc "$WORLDD" epoch bootstrap --store "$DB" --ailang-bin "$FAKE"
  is "$rc:$err" "8:worldd epoch bootstrap: $REFUSE" "... the impostor is refused afterwards"
else
  skip "no sqlite3 shell" "legacy registry upgrade"
fi
done_testing
