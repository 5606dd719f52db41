#!/bin/bash
# tests/coordinator/mint.sh: worldd session mint end to end, the confirmation
# typed through a pseudo-terminal (tests/publish/pty.py) with CI removed from
# that child's environment; the refusals (CI set, no terminal, stdin not the
# terminal, n, EOF) write nothing; the minted credential works with worldd call;
# and the residual: util-linux `script` answers the question from a pipe.
. "$top_srcdir/tests/tap.sh"
PTY="$top_srcdir/tests/publish/pty.py"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
"$top_builddir/tests/coordinator/ctest-fixture" "$T" seed 'Test.Echo=s:1' >/dev/null || bail "fixture"
DB="$T/world.db"
sessions() { "$WORLDD" session list --store "$DB" | grep -c "episode=ep1 " || true; }
mint() { # ANSWER ARGS...
  local a=$1; shift
  env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '[y/N] ' --answer "$a" --out "$T/o" --err "$T/e" --tty "$T/t" -- \
    "$WORLDD" session mint --store "$DB" "$@"
  rc=$?; out=$(cat "$T/o"); err=$(cat "$T/e"); tty=$(cat "$T/t")
}

mint y --episode ep1 --grant Workspace.Read=worktree:5 --grant Workspace.Write=worktree:2 --ttl 600
is "$rc" 0 "mint confirmed with y: exit 0"
like "$out" '^[0-9a-f]{64}$' "the credential is printed once on stdout (64 lowercase hex)"
cred=$out
is "$tty" "Confirm mint for episode ep1 (2 grant(s), expiry +600s) with a session credential? [y/N] y" "the reference's prompt, verbatim"
like "$err" "^worldd session mint: session [0-9a-f]{64} for episode ep1, expires_at [0-9]+ \(\+600s\)$" "stderr names the session id and expiry"
id=$(printf '%s' "$cred" | sha256sum | cut -d' ' -f1)
run_capture list lerr lrc "$WORLDD" session list --store "$DB"
like "$list" "^$id episode=ep1 .* live grants=Workspace.Read=worktree:5/spent=0/remaining=5,Workspace.Write=worktree:2/spent=0/remaining=2$" "listed by id = sha256 of the credential, with its grants"
run_capture o e r "$WORLDD" call --store "$DB" --session "$cred" t.seen --json '{}'
is "$r" 0 "the minted credential opens a session for worldd call"
n=$(sessions)

mint n --episode ep1 --grant Workspace.Read=worktree:5
is "$rc" 20 "answer n: exit 20"
is "$err" "$(printf 'STOP fence=confirmation reason=mismatch\n  aborted (not confirmed): only y or yes proceeds')" "... with its STOP line"
is "$out" "" "... no credential printed"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '[y/N] ' --eof --out "$T/o" --err "$T/e" --tty "$T/t" -- \
  "$WORLDD" session mint --store "$DB" --episode ep1 --grant Workspace.Read=worktree:5
is "$?:$(head -n1 "$T/e")" "20:STOP fence=confirmation reason=eof" "EOF at the prompt: refused"
env CI=true python3 "$PTY" --after '[y/N] ' --answer y --out "$T/o" --err "$T/e" --tty "$T/t" -- \
  "$WORLDD" session mint --store "$DB" --episode ep1 --grant Workspace.Read=worktree:5
is "$?:$(head -n1 "$T/e"):$(cat "$T/t")" "20:STOP fence=ci reason=ci:" "CI set: refused before asking, even on a terminal"
env -u CI GITHUB_ACTIONS=true python3 "$PTY" --after '[y/N] ' --answer y --out "$T/o" --err "$T/e" --tty "$T/t" -- \
  "$WORLDD" session mint --store "$DB" --episode ep1 --grant Workspace.Read=worktree:5
is "$?:$(head -n1 "$T/e")" "20:STOP fence=ci reason=github_actions" "GITHUB_ACTIONS set: refused"
run_capture o e r bash -c "echo y | env -u CI -u GITHUB_ACTIONS setsid -w '$WORLDD' session mint --store '$DB' --episode ep1 --grant Workspace.Read=worktree:5"
is "$r:$(printf '%s' "$e" | head -n1)" "20:STOP fence=tty reason=no-controlling-terminal" "no controlling terminal, y piped in: refused"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --stdin null --after '[y/N] ' --answer y --out "$T/o" --err "$T/e" --tty "$T/t" -- \
  "$WORLDD" session mint --store "$DB" --episode ep1 --grant Workspace.Read=worktree:5
is "$?:$(head -n1 "$T/e")" "20:STOP fence=tty reason=stdin-is-not-the-controlling-terminal" "stdin not the terminal: refused"
is "$(sessions)" "$n" "no refusal wrote a session"

# The residual (docs/security.md, "The attended fence"): the piped y that was
# refused above mints a real session once util-linux `script` gives the verb
# a pseudo-terminal -- the fence holds off unattended automation, not an
# agent with a shell. The refusal above is the control.
if command -v script >/dev/null && script --version 2>/dev/null | grep -q util-linux; then
  run_capture o e r bash -c "echo y | env -u CI -u GITHUB_ACTIONS setsid -w script -qec \"'$WORLDD' session mint --store '$DB' --episode ep1 --grant Workspace.Read=worktree:5\" /dev/null"
  is "$r" 0 "residual: y piped into util-linux script, no controlling terminal before: the mint goes through (exit 0)"
  is "$(sessions)" "$((n + 1))" "residual: ... and one more session of ep1 is stored"
  n=$((n + 1))
else
  skip "util-linux script not installed" "residual: script answers the mint"
  skip "util-linux script not installed" "residual: ... a session stored"
fi

run_capture o e r "$WORLDD" session mint --store "$DB" --episode Bad_Ep --grant Workspace.Read=worktree:5
is "$r" 2 "a bad episode is a usage error (before any question)"
run_capture o e r "$WORLDD" session mint --store "$DB" --episode ep1 --grant Workspace.Read
is "$r" 2 "a bad grant is a usage error"
like "$e" 'grant "Workspace.Read": expected EFFECT=SCOPE:BUDGET' "... naming the grant"
run_capture o e r "$WORLDD" session mint --store "$DB" --episode ep1 --grant A.B=s:1 --ttl 0
is "$r" 2 "--ttl 0 refused"
run_capture o e r "$WORLDD" session mint --store "$DB" --episode ep1
is "$r" 2 "no --grant: usage"
done_testing
