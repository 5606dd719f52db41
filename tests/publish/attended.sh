#!/bin/bash
# cli/attended.h on its own, through a pseudo-terminal (tests/publish/pty.py):
# the y/N question of `worldd session mint` (only y / yes proceeds) and the
# typed phrase, each refusal with its STOP line; CI removed from the child's
# environment except where the ci fence is the subject. And the residual:
# util-linux `script` answers it from a pipe (any pseudo-terminal does).
. "$top_srcdir/tests/tap.sh"
P="$top_builddir/tests/publish/attended_probe"
PTY="$top_srcdir/tests/publish/pty.py"
T=$(mktemp -d /tmp/world-attended.XXXXXX)
trap 'rm -rf "$T"' EXIT
Q='Confirm mint for episode ep1 (2 grant(s), expiry +3600s) with a session credential? [y/N] '
ask() { # ask ANSWER|--eof yes|phrase ARGS...: sets rc, out, err, tty
  local a=$1 kind=$2 after='> '; shift 2
  [ "$kind" = yes ] && after='[y/N] '
  local ans=(--answer "$a")
  [ "$a" = --eof ] && ans=(--eof)
  env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after "$after" "${ans[@]}" --out "$T/o" --err "$T/e" --tty "$T/t" -- "$P" "$kind" "$@"
  rc=$?; out=$(cat "$T/o"); err=$(cat "$T/e"); tty=$(cat "$T/t")
}
for a in y yes ' yes '; do
  ask "$a" yes "$Q"
  is "$rc:$out" "0:confirmed" "y/N: '$a' proceeds"
done
is "$tty" "$Q yes " "the question is written to the terminal verbatim"
for a in n no Y YES '' 'yes please'; do
  ask "$a" yes "$Q"
  is "$rc:$err" "20:$(printf 'STOP fence=confirmation reason=mismatch\n  aborted (not confirmed): only y or yes proceeds')" "y/N: '$a' aborts"
done
ask --eof yes "$Q"
is "$rc:$err" "20:$(printf 'STOP fence=confirmation reason=eof\n  the terminal closed before an answer was typed; aborted (not confirmed)')" "y/N: EOF aborts"
env CI=1 python3 "$PTY" --out "$T/o" --err "$T/e" --tty "$T/t" --after '[y/N] ' --answer y -- "$P" yes "$Q"
is "$?:$(head -n1 "$T/e"):$(cat "$T/t")" "20:STOP fence=ci reason=ci:" "y/N: CI set: refused before asking"
run_capture out err rc bash -c "echo y | env -u CI -u GITHUB_ACTIONS setsid -w '$P' yes '$Q'"
is "$rc:$(printf '%s' "$err" | head -n1)" "20:STOP fence=tty reason=no-controlling-terminal" "y/N: no controlling terminal, y piped in: refused"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --stdin null --out "$T/o" --err "$T/e" --tty "$T/t" --after '[y/N] ' --answer y -- "$P" yes "$Q"
is "$?:$(head -n1 "$T/e")" "20:STOP fence=tty reason=stdin-is-not-the-controlling-terminal" "y/N: stdin /dev/null: refused"

# The residual (docs/security.md, "The attended fence"): ANY pseudo-terminal
# answers it. The same piped answer, from the same session-less shell as the
# refusal above, confirms once util-linux `script` puts a pty of its own
# between the pipe and the probe -- one command any agent with a shell can
# type. So the fence stops unattended automation (cron, CI, a harness without
# a terminal), not an operator's agent that runs shell commands; the refusal
# above is the control.
if command -v script >/dev/null && script --version 2>/dev/null | grep -q util-linux; then
  run_capture out err rc bash -c "echo y | env -u CI -u GITHUB_ACTIONS setsid -w script -qec \"'$P' yes '$Q'\" /dev/null"
  is "$rc" 0 "residual: y piped into util-linux script (its own pty), no controlling terminal before: confirmed (exit 0)"
  like "$out" "confirmed" "residual: ... the probe printed confirmed"
  run_capture out err rc bash -c "printf 'publish it\\n' | env -u CI -u GITHUB_ACTIONS setsid -w script -qec \"'$P' phrase 'Type exactly, to do it:' 'publish it'\" /dev/null"
  is "$rc" 0 "residual: the typed phrase piped into script is accepted as typed (exit 0)"
  run_capture out err rc bash -c "echo y | env CI=1 setsid -w script -qec \"'$P' yes '$Q'\" /dev/null"
  is "$rc" 20 "residual: what script does not defeat is the ci tripwire (CI set: exit 20)"
else
  skip "util-linux script not installed" "residual: script answers the y/N fence"
  skip "util-linux script not installed" "residual: ... confirmed"
  skip "util-linux script not installed" "residual: script answers the phrase"
  skip "util-linux script not installed" "residual: CI still refused"
fi

ask 'publish it' phrase 'Type exactly, to do it:' 'publish it'
is "$rc:$out" "0:confirmed" "phrase: typed exactly, confirmed"
is "$tty" "$(printf 'Type exactly, to do it:\n  publish it\n> publish it')" "phrase: the prompt, then the typed line"
ask 'publish  it' phrase 'Type exactly, to do it:' 'publish it'
is "$rc:$(printf '%s' "$err" | head -n1)" "20:STOP fence=confirmation reason=mismatch" "phrase: one space too many is a mismatch"
ask "$(head -c 5000 /dev/zero | tr '\0' 'p')" phrase 'Type exactly, to do it:' 'publish it'
is "$rc:$(printf '%s' "$err" | head -n1)" "20:STOP fence=confirmation reason=mismatch" "phrase: an over-long line is a mismatch"
done_testing
