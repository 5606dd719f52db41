#!/bin/bash
# A store path that does not exist (issue 24 item 8): every verb that needs
# an existing store answers exit 4 with one line naming the path, and
# creates nothing -- no DB, DB-wal, DB-shm, DB.artifacts, DB.operator-token,
# no backup destination. Control: epoch bootstrap, the verb that makes a
# store, still does at the same kind of path.
. "$top_srcdir/tests/tap.sh"
T=$(mktemp -d /tmp/world-absent.XXXXXX)
trap 'rm -rf "$T"' EXIT
W=$WORLDD
cred=0000000000000000000000000000000000000000000000000000000000000000
id=1111111111111111111111111111111111111111111111111111111111111111
listing() { (cd "$1" && ls -A | sort | tr '\n' ' '); }

absent() { # NAME ARGS...: the verb, run in an empty directory on typo.db
  local name=$1; shift
  mkdir -p "$T/$name"
  (cd "$T/$name" && exec "$W" "$@" </dev/null) >"$T/$name.out" 2>"$T/$name.err"
  local rc=$? err; err=$(cat "$T/$name.err")
  is "$rc" 4 "$name on a store that does not exist: exit 4"
  is "$(printf '%s\n' "$err" | wc -l):$(printf '%s' "$err" | grep -c 'typo\.db')" "1:1" "... one stderr line naming the path ($err)"
  is "$(listing "$T/$name")" "" "... nothing created"
}
absent call call --store typo.db --session "$cred" t.seen --json '{}'
absent session-mint session mint --store typo.db --episode ep1 --grant Test.Echo=s:1
absent session-revoke session revoke --store typo.db --episode ep1
absent session-revoke-id session revoke --store typo.db "$id"
absent session-list session list --store typo.db
absent journal journal --store typo.db --indeterminate
absent token-rotate token rotate --store typo.db
absent serve serve --store typo.db --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0
absent why why --store typo.db 1
absent replay replay --store typo.db 1
absent scan scan --store typo.db
absent backup backup --store typo.db dest.db
absent log-get log get --store typo.db 1
absent world-head world head --store typo.db
absent epoch-show epoch show --store typo.db
absent epoch-admit epoch admit --store typo.db --ailang-bin "$AILANG_LITE"
absent epoch-nominate epoch nominate --store typo.db --ailang-bin "$AILANG_LITE"
# world-publish too (its own program)
W=$top_builddir/cli/world-publish
printf '[{"id":"tools.echo","transitionFnFile":"echo.ail"}]\n' > "$T/m.json"
absent publish transitions --store typo.db --manifest "$T/m.json" --ailang-bin "$AILANG_LITE"
absent retire retire --store typo.db tools.echo
W=$WORLDD

# control: the creating verb makes a store at such a path
mkdir -p "$T/boot"
(cd "$T/boot" && "$W" epoch bootstrap --store typo.db --ailang-bin "$AILANG_LITE" >/dev/null 2>&1)
is "$?" 0 "control: epoch bootstrap creates a store at an absent path"
like "$(listing "$T/boot")" 'typo\.db ' "... typo.db is there"
done_testing
