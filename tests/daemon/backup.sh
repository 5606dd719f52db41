#!/bin/bash
# worldd backup (docs/operations.md, "Backup and restore"): a backup taken
# while a daemon serves a stream of MCP calls holds every call acknowledged
# before it started, scans clean and replays with no divergence; DEST (or
# DEST.artifacts) existing is refused with nothing written; a backup killed
# while copying (pause point backup.copying) or between its two renames
# (backup.renaming) leaves nothing at DEST that opens as a store.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
command -v curl >/dev/null || { skip "curl not installed" "daemon tests"; done_testing; exit; }
daemon_setup
CL=()
trap 'for p in "${CL[@]}"; do kill "$p" 2>/dev/null; done; daemon_kill; rm -rf "$T"' EXIT
callx() { # TASK: one tools/call of tools_decho; prints ok on success
  curl -sS -m 60 -X POST "$URL/mcp/" -H "$(auth "$CRED")" "${MCP_HDRS[@]}" --data-binary \
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"tools_decho\",\"arguments\":{\"t\":\"$1\"},\"_meta\":{\"world/task_id\":\"$1\"}}}" 2>/dev/null |
    grep -q '"isError":false' && echo ok
}
committed() { # DB: the task ids of committed tools_decho calls, sorted
  "$SQLITE3_SHELL" -readonly "$1" "SELECT substr(subject, 10) FROM journal WHERE phase='outcome' AND status='committed' AND kind='invocation' AND subject LIKE 'mcp:ep-a:%' ORDER BY 1"
}
daemon_start || bail "daemon"
L="$T/load"; mkdir -p "$L"
client() { # C: up to 60 calls, each acknowledged task id appended to ack.C, until stop exists
  local i
  for i in $(seq 1 60); do
    [ -e "$L/stop" ] && break
    [ "$(callx "b$1-$i")" = ok ] && echo "b$1-$i" >> "$L/ack.$1"
  done
}
client 1 & CL+=($!)
client 2 & CL+=($!)
for _ in $(seq 1 600); do [ "$(cat "$L"/ack.* 2>/dev/null | wc -l)" -ge 8 ] && break; sleep 0.05; done
sort -u "$L"/ack.* > "$T/before"
n_before=$(wc -l < "$T/before")
run_capture out err rc "$WORLDD" backup --store "$DB" "$T/copy.db"
is "$rc" 0 "worldd backup while a daemon serves two clients: exit 0 ($err)"
like "$out" "^backup $T/copy.db entries=[0-9]+ pages=[0-9]+ interpreters=1 objects=[0-9]+$" "... one summary line"
sort -u "$L"/ack.* > "$T/after_backup"
touch "$L/stop"
for p in "${CL[@]}"; do wait "$p"; done
CL=()
ok "$([ "$n_before" -ge 8 ]; echo $?)" "calls were acknowledged before the backup started ($n_before)"
committed "$T/copy.db" > "$T/in_copy"
is "$(comm -23 "$T/before" "$T/in_copy" | wc -l)" 0 "every call acknowledged before the backup started is committed in the copy"
ok "$([ "$(wc -l < "$T/in_copy")" -lt "$(committed "$DB" | wc -l)" ]; echo $?)" \
  "the clients kept committing during and after the backup (the copy is a snapshot: $(wc -l < "$T/in_copy") of $(committed "$DB" | wc -l))"
is "$(stat -c %a "$T/copy.db")/$(stat -c %a "$T/copy.db.artifacts")" "600/700" "the copy is its owner's only (0600 database, 0700 archive)"
run_capture out err rc "$WORLDD" scan --store "$T/copy.db" --objects
is "$rc:$out" "0:" "the copy scans clean, objects included ($err)"
run_capture out err rc "$WORLDD" replay --all --store "$T/copy.db"
is "$rc" 0 "worldd replay --all on the copy: exit 0 ($err)"
like "$(printf '%s\n' "$out" | tail -1)" "^replayed [1-9][0-9]*, diverged 0$" "... it diverges nowhere"
ls -a "$T" | grep -c '\.backup-' > "$T/nstage"
is "$(cat "$T/nstage")" 0 "no staging directory is left by a backup that succeeded"

# ---- DEST exists: refused, nothing written ----
sum_copy=$(sha256sum < "$T/copy.db")
run_capture out err rc "$WORLDD" backup --store "$DB" "$T/copy.db"
is "$rc" 8 "a backup onto an existing DEST: exit 8"
like "$err" "copy.db exists; refusing" "... naming it"
is "$(sha256sum < "$T/copy.db")" "$sum_copy" "... DEST unchanged"
mkdir "$T/only.db.artifacts"
run_capture out err rc "$WORLDD" backup --store "$DB" "$T/only.db"
is "$rc:$([ -e "$T/only.db" ]; echo $?)" "8:1" "DEST.artifacts existing is refused too, DEST not made"
rmdir "$T/only.db.artifacts"
run_capture out err rc "$WORLDD" backup --store "$T/none.db" "$T/x.db"
is "$rc:$(ls -a "$T" | grep -c 'x\.db')" "4:0" "a store that does not exist: exit 4, nothing written"

# ---- killed midway ----
if ! grep -q -- '-DWORLD_TEST_HOOKS=1' "$top_builddir/Makefile"; then
  for t in copying-reached copying-nothing copying-noscan renaming-reached renaming-nothing renaming-refused; do
    skip "built without --enable-test-hooks (no pause points)" "killed backup: $t"
  done
else
  PD="$T/pause"; mkdir -p "$PD"
  killed_at() { # POINT DEST: start a backup held at POINT, SIGKILL it there
    WORLD_TEST_PAUSE="$1" WORLD_TEST_PAUSE_DIR="$PD" "$WORLDD" backup --store "$DB" "$2" >/dev/null 2>&1 &
    local bp=$!
    for _ in $(seq 1 600); do [ -e "$PD/$1.1.reached" ] && break; sleep 0.05; done
    [ -e "$PD/$1.1.reached" ]; reached=$?
    kill -KILL "$bp"; wait "$bp" 2>/dev/null
  }
  killed_at backup.copying "$T/k1.db"
  is "$reached" 0 "a backup held while copying its first pages"
  is "$(ls -a "$T" | grep -E '^k1\.db' | wc -l)" 0 "killed there: no k1.db and no k1.db.artifacts"
  run_capture out err rc "$WORLDD" scan --store "$T/k1.db"
  ok "$([ "$rc" != 0 ]; echo $?)" "... and nothing opens as a store at DEST (scan exit $rc)"
  killed_at backup.renaming "$T/k2.db"
  is "$reached" 0 "a backup held between renaming the archive and the database"
  is "$([ -e "$T/k2.db" ]; echo $?):$([ -d "$T/k2.db.artifacts" ]; echo $?)" "1:0" "killed there: the archive is in place, the database is not"
  run_capture out err rc "$WORLDD" backup --store "$DB" "$T/k2.db"
  is "$rc" 8 "... a later backup to that DEST is refused until the leftover is removed"
  rm -rf "$T"/.k1.db.backup-* "$T"/.k2.db.backup-* "$T/k2.db.artifacts"
fi

daemon_stop
done_testing
