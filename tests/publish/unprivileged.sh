#!/bin/bash
# The unprivileged path: a publisher without root (`nobody`, via setpriv when
# the suite runs as root) bootstraps a store it owns, checks a manifest and
# publishes it at a pseudo-terminal; the source checks run in capsules in a
# user namespace of their own, and a world/* import is still refused.
. "$top_srcdir/tests/tap.sh"
PTY="$top_srcdir/tests/publish/pty.py"
T=$(mktemp -d /tmp/world-publish-unpriv.XXXXXX)
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
cp "$WORLDD" "$top_builddir/cli/world-publish" "$AILANG_LITE" "$T/"
if [ "$(id -u)" = 0 ]; then
  if ! command -v setpriv >/dev/null; then skip "setpriv missing" "unprivileged publish"; done_testing; exit; fi
  AS=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
  mkdir "$T/home" && chown nobody:nogroup "$T/home"
else
  AS=()
  mkdir "$T/home"
fi
cd "$T/home" || bail "cd"
printf 'module echo\nexport func main(input: string) -> string { "{\\"echo\\":${input}}" }\n' > echo.ail
printf 'module bad\nimport world/secrets (get)\nexport func main(input: string) -> string { input }\n' > bad.ail
printf '[{"id":"tools.echo","transitionFnFile":"echo.ail"}]\n' > m.json
printf '[{"id":"tools.bad","transitionFnFile":"bad.ail"}]\n' > bad.json
chmod 644 echo.ail bad.ail m.json bad.json
DB="$T/home/w.db"
run_capture out err rc "${AS[@]}" "$T/worldd" epoch bootstrap --store "$DB" --ailang-bin "$T/ailang-lite"
is "$rc" 0 "unprivileged epoch bootstrap: exit 0"
run_capture out err rc "${AS[@]}" "$T/world-publish" check --manifest m.json --ailang-bin "$T/ailang-lite"
is "$rc" 0 "unprivileged check: exit 0"
like "$out" '^ok entry "tools.echo": would publish as MCP tool tools_decho' "... the entry would publish"
run_capture out err rc "${AS[@]}" "$T/world-publish" check --manifest bad.json --ailang-bin "$T/ailang-lite"
is "$rc" 19 "unprivileged check of a world/* import: exit 19"
like "$out" 'LDR001: module not found: world/secrets' "... LDR001 in a capsule of its own"
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --out "$T/o" --err "$T/e" --tty "$T/t" --answer "publish 1 transitions to $DB" -- \
  "${AS[@]}" "$T/world-publish" transitions --store "$DB" --manifest m.json --ailang-bin "$T/ailang-lite"
is "$?" 0 "unprivileged publish at a terminal: exit 0"
like "$(cat "$T/o")" "^published transition registry revision 1 " "... revision 1"
is "$(stat -c %U "$DB")" "$([ "$(id -u)" = 0 ] && echo nobody || id -un)" "... in the publisher's own store"
done_testing
