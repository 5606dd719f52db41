#!/bin/bash
# A full disk (issue 24 item 8): a verb on a store whose filesystem has no
# space left says so in exactly one stderr line naming the store and ENOSPC,
# exit 9 (I/O) -- not 6 "not a readable SQLite database" -- and leaves
# the store as it was. Needs root (a 2 MiB tmpfs); otherwise skipped.
. "$top_srcdir/tests/tap.sh"
W=$WORLDD
verbs=("session list" "scan" "call --session 00 t.seen --json {}" "object put --semantic-id x/y" "serve --listen 127.0.0.1:0")
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
  for v in "${verbs[@]}"; do skip "not root or no unshare" "worldd $v on a full disk"; done
  done_testing; exit
fi
T=$(mktemp -d /tmp/world-full.XXXXXX)
trap 'rm -rf "$T"' EXIT
cat > "$T/run.sh" <<'SH'
set -e
mount --make-rprivate /
mount -t tmpfs -o size=2m tmpfs "$T/fs"
"$W" epoch bootstrap --store "$T/fs/w.db" --ailang-bin "$AILANG_LITE" >/dev/null
sha256sum "$T/fs/w.db" > "$T/before"
head -c 4000000 /dev/zero > "$T/fs/fill" 2>/dev/null || true
set +e
i=0
for v in "${VERBS[@]}"; do
  i=$((i + 1))
  # shellcheck disable=SC2086
  echo x | timeout 20 "$W" $v --store "$T/fs/w.db" >/dev/null 2>"$T/err.$i"
  echo $? > "$T/rc.$i"
done
rm -f "$T/fs/fill"
ls -A "$T/fs" | tr '\n' ' ' > "$T/after.ls"
sha256sum -c --quiet "$T/before" > "$T/same" 2>&1; echo $? >> "$T/same"
SH
mkdir "$T/fs"
export T W
VERBS_DECL=$(declare -p verbs | sed 's/^declare -a verbs=/VERBS=/')
unshare -m bash -c "$VERBS_DECL; $(cat "$T/run.sh")" || bail "could not set up the full tmpfs"
i=0
for v in "${verbs[@]}"; do
  i=$((i + 1))
  err=$(cat "$T/err.$i")
  is "$(cat "$T/rc.$i"):$(printf '%s\n' "$err" | wc -l)" "9:1" "worldd $v on a full disk: exit 9, one stderr line ($err)"
  like "$err" "store $T/fs/w.db: No space left on device" "... naming the store and the full disk"
done
like "$(cat "$T/after.ls")" "^w\.db (w\.db-shm w\.db-wal )?w\.db\.artifacts (w\.db\.log-key )?(w\.db\.write-queue )?$" \
  "nothing beside the store but the archive (and SQLite's -wal/-shm, the log's signing key made by bootstrap, and the writers' queue lock, docs/store.md)"
is "$(tail -n1 "$T/same")" 0 "the store is byte-identical"
done_testing
