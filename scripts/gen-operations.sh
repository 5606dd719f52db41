#!/bin/sh
# scripts/gen-operations.sh WORLDD AILANG_LITE: print docs/operations.md.
# The reference part is taken from the binaries' own --help texts, so the
# page cannot drift from the code: tests/cli_docs.sh regenerates it and
# fails when the committed page differs.
set -e
WORLDD=$1 AILANG_LITE=$2
# world-publish is built beside worldd (cli/); a third argument overrides it.
WORLD_PUBLISH=${3:-$(dirname "$WORLDD")/world-publish}
# world-verify in the build's verify/ (or beside worldd, installed); a fourth argument overrides it.
WORLD_VERIFY=${4:-$(dirname "$WORLDD")/../verify/world-verify}
[ -x "$WORLD_VERIFY" ] || WORLD_VERIFY=$(dirname "$WORLDD")/world-verify
# The hand-written manual comes first, verbatim (docs/parts/operations-manual.md).
cat "$(dirname "$0")/../docs/parts/operations-manual.md"
cat <<'HEAD'
## Set-up (fresh Debian 12, root)

| command | what it does |
| --- | --- |
| `./scripts/quickstart.sh [--keep DIR]` | installs missing packages, builds into `build/main`, publishes the bundled packages to a temporary store, mints a session, starts `worldd serve`, calls three tools over MCP, prints their provenance and stops the daemon (`--keep DIR` keeps store and worktree) |
| `./scripts/test.sh` | installs missing packages, builds with `-Wall -Wextra -Werror` and runs the suite, then again under ASan+UBSan; last line `N passed, N failed, N skipped`; exit 1 on any failure |
| `make bench` (in a build dir) | runs every benchmark in `bench/` and prints figures and ratios |

CI (`.ci/run`) runs exactly `./scripts/test.sh` with `CI=true`.

One host setting makes an occasional capsule start as fast as a
back-to-back one: cgroup `favordynmods` (with cgroups v1 for memory and
pids, the first attach after a quiet spell otherwise waits ~10-15 ms for an
RCU grace period). Set it with
`mount -o remount,favordynmods /sys/fs/cgroup/unified` (any cgroup2 mount;
a v1 mount refuses it) or boot with `cgroup_favordynmods=1`; on Linux 6.18
it stays on until reboot. Every run's layers line (`--summary`) and the
daemon's start log say whether it is on; without it `worldd serve` runs a
keeper thread instead (docs/security.md §7).

## Output lines worth scripting against

- `worldd scan` prints nothing when the scan is clean and complete; otherwise
  one line per finding, exactly:
  `integrity_hole table=log_entries index=N field=F`,
  `integrity_hole table=objects|artifacts|journal index=N field=F ref=R`
  (a dependency of entry N),
  `integrity_hole table=worlds ref=R field=F`,
  `integrity_hole table=objects ref=R field=payload` (`--objects`), and, when
  the row or time budget ran out,
  `integrity_scan_incomplete log_rows=N world_rows=N holes=N resume_log_index=N resume_world_ref=R`
  (with `--objects` followed by ` object_rows=N resume_object_ref=R`;
  docs/store.md has the fields).
- `worldd why` prints `entry N ID record REF`, one line per link
  (`✓` or `✗`, name, ref, detail) and last `all N link(s) verified` or
  `K of N link(s) BROKEN`; `worldd replay` prints per entry
  `entry N ID identical` or
  `entry N ID diverged at stage S, byte offset O: DETAIL`, and with `--all`
  last `replayed N, diverged K` (docs/provenance.md).
- Every error is one line on stderr, `worldd VERB: what failed: on what`,
  and the exit code tells its class (table below). Output that could not be
  written (a full disk, a closed pipe) is an error too: exit 9.

## Conventions of every verb

- Flags are `--flag VALUE` or `--flag=VALUE`; a flag given twice is refused
  (`flag --source given twice`, exit 2); `-` names standard input wherever
  a file is read (`--source -`, `--input-file -`, `--json-file -`).
- One verb per job: `worldd run` runs a transition (pure, `--effectful
  --test-broker`, or `--profile tool-run`) and `worldd check` checks one.
  `worldd invoke` and `worldd source check` are kept only as aliases of
  them (same flags, output and exit codes); the old `invoke` flags
  `--phase-ms`, `--invocation-ms` and `--capacity` are gone: the one timeout
  flag is `--timeout-ms`.
- Read verbs (`scan`, `object get`, `log get`, `world head`, `session list`,
  `journal`, `epoch show`, `why`) open the store read-only and create
  nothing beside a store they do not own or in a directory they cannot
  write (SQLite immutable mode); a file that is not a SQLite store is exit 24.
  No process owns the store: writers (daemons, `session mint/revoke`,
  `world-publish`, epoch verbs) share it, each write one short transaction;
  `--wait-lock SECONDS` is how long a write waits for another writer's
  transaction (the busy timeout; default and 0: 5 s; past it, exit 5).
- A writer that creates a store makes its files its owner's only, whatever
  the umask: the database, `-wal` and `-shm` 0600, the
  `.artifacts` directories 0700 (docs/store.md, "File modes"); a writer
  opening a schema-1 store migrates it to schema 2 once (a store holding two
  committed outcomes for one task is refused untouched, exit 6).
- Without `--ailang-bin`, `run` and `check` use the installed ailang-lite
  (`worldd --help` prints its path); `make install` puts it in
  `$(pkglibexecdir)` and man pages for worldd, world-publish, world-verify and ailang-lite
  in `man1`.
- `worldd object put` and `worldd hash` print one `sha256:<64 hex>` line;
  `worldd archive` prints the interpreter ref and its release string.

## worldd verbs

HEAD
# The installed interpreter's path depends on --prefix: the page names it
# by its make variable, so it is the same for every configuration.
LIBEXEC_LITE=$("$WORLDD" --help | sed -n 's/^installed interpreter \(.*\)\.$/\1/p')
# (worldd audit's probe lives beside it: $(pkglibexecdir)/world-probe.)
norm() {
  if [ -n "$LIBEXEC_LITE" ]; then
    sed -e "s#$LIBEXEC_LITE#\$(pkglibexecdir)/ailang-lite#g" \
      -e "s#${LIBEXEC_LITE%/ailang-lite}/world-probe#\$(pkglibexecdir)/world-probe#g"
  else cat; fi
}
echo '```'
"$WORLDD" --help | norm
echo '```'
"$WORLDD" --help | awk '/^verbs:/{on=1; next} on && /^$/{exit} on{sub(/^  /,""); split($0, a, /  +/); print a[1]}' |
while IFS= read -r verb; do
  echo
  echo "### worldd $verb"
  echo
  echo '```'
  # shellcheck disable=SC2086
  "$WORLDD" $verb --help | norm
  echo '```'
done
echo
echo "## world-publish"
echo
echo "docs/publishing.md describes the manifest, every check and every outcome line."
echo
echo '```'
"$WORLD_PUBLISH" --help
echo '```'
echo
echo "## world-verify"
echo
echo "docs/provenance.md describes the formats it checks and how to verify with Go's packages."
echo
echo '```'
"$WORLD_VERIFY" --help
echo '```'
echo
echo "## ailang-lite"
echo
echo '```'
"$AILANG_LITE" --version
"$AILANG_LITE" --help 2>&1 || true
echo '```'
echo
echo "docs/ailang-lite.md describes the language subset and every error code."
