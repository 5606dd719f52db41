#!/bin/bash
# The operator token kept as a hash in the store (docs/daemon.md, "The
# operator token"): two daemons of one store accept the same token; the
# second daemon leaves the token file as the first wrote it; `worldd token
# rotate` (attended: refused with CI set, confirmed through a
# pseudo-terminal) prints a new token and writes it to the file, and from
# the next request on both daemons refuse the old one and accept the new
# one; stopping one daemon leaves the file; a version-2 store without the
# table gets it on a daemon's start.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
command -v curl >/dev/null || { skip "curl not installed" "daemon tests"; done_testing; exit; }
PTY="$top_srcdir/tests/publish/pty.py"
daemon_setup
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; daemon_kill; rm -rf "$T"' EXIT
declare -a U P
start_d() {
  local n=$1; shift
  "$WORLDD" serve --store "$DB" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 >"$T/out$n" 2>"$T/err$n" &
  P[$n]=$!; PIDS+=("${P[$n]}")
  for _ in $(seq 1 300); do
    U[$n]=$(sed -n 's/^worldd listening on //p' "$T/out$n")
    [ -n "${U[$n]}" ] && return 0
    kill -0 "${P[$n]}" 2>/dev/null || break
    sleep 0.1
  done
  diag "daemon $n did not start: $(cat "$T/err$n")"; return 1
}
stop_d() { kill -TERM "${P[$1]}" 2>/dev/null; wait "${P[$1]}"; }
# code N TOKEN: GET /v1/head on daemon N with that bearer: 401 refused, 404 (no world head yet) admitted
code() { curl -sS -m 30 -o /dev/null -w '%{http_code}' -H "$(auth "$2")" "${U[$1]}/v1/head" 2>/dev/null; }
TF="$DB.operator-token"
rotate() { # ANSWER [env...]: worldd token rotate through a pseudo-terminal
  local a=$1; shift
  env "$@" python3 "$PTY" --after '[y/N] ' --answer "$a" --out "$T/o" --err "$T/e" --tty "$T/t" -- \
    "$WORLDD" token rotate --store "$DB"
  rc=$?; out=$(cat "$T/o"); err=$(cat "$T/e")
}

run_capture out err rc "$WORLDD" token path --store "$DB"
is "$rc:$out" "0:$TF" "worldd token path names <DB>.operator-token"
ok "$([ ! -e "$TF" ]; echo $?)" "no token file before a daemon started"
start_d 1 || bail "daemon 1"
is "$(stat -c %a "$TF" 2>/dev/null)" 600 "the first daemon of the store writes the token file, mode 0600"
TOKEN=$(cat "$TF")
like "$TOKEN" '^[0-9a-f]{64}$' "... a 64-hex token"
before=$(stat -c '%i %Y %s' "$TF")
start_d 2 || bail "daemon 2"
is "$(stat -c '%i %Y %s' "$TF"):$(cat "$TF")" "$before:$TOKEN" "the second daemon leaves the file as it was (same inode, time, token)"
like "$(cat "$T/err2")" "operator token: .*the store's, shared by every daemon" "... and logs that it uses the store's token"
is "$(code 1 "$TOKEN")/$(code 2 "$TOKEN")" "404/404" "the one token works on both daemons"
is "$(code 1 "$CRED_UNKNOWN")/$(code 2 "$CRED_UNKNOWN")" "401/401" "control: another 64-hex bearer is refused on both"
ID=$(printf '%s' "$TOKEN" | sha256sum | cut -d' ' -f1)
is "$("$SQLITE3_SHELL" -readonly "$DB" "SELECT token_hash FROM operator_token")" "sha256:$ID" "the store holds the token's sha256, not the token"
is "$(grep -c "$TOKEN" "$DB" "$DB-wal" 2>/dev/null | awk -F: '{s+=$2} END {print s+0}')" 0 "... the token itself is in no store file"

# ---- rotate: attended ----
rotate y CI=true
is "$rc" 20 "token rotate with CI set: exit 20"
like "$err" "^STOP fence=ci" "... the ci fence"
is "$out:$(cat "$TF")" ":$TOKEN" "... nothing printed, the file unchanged"
is "$(code 1 "$TOKEN")/$(code 2 "$TOKEN")" "404/404" "... and the old token still works on both daemons"
run_capture out err rc "$WORLDD" token rotate --store "$DB" </dev/null
is "$rc" 20 "token rotate without a terminal: exit 20"
rotate y -u CI -u GITHUB_ACTIONS
is "$rc" 0 "token rotate confirmed on the terminal: exit 0 ($err)"
NEW=$out
like "$NEW" '^[0-9a-f]{64}$' "the new token is printed once on stdout"
ok "$([ "$NEW" != "$TOKEN" ]; echo $?)" "... and differs from the old one"
is "$(cat "$TF"):$(stat -c %a "$TF")" "$NEW:600" "the file holds the new token, mode 0600"
is "$(code 1 "$TOKEN")/$(code 2 "$TOKEN")" "401/401" "after rotate the old token is refused on both daemons"
is "$(code 1 "$NEW")/$(code 2 "$NEW")" "404/404" "... and the new one works on both"

# ---- one of two daemons stops ----
stop_d 1
is "$?" 0 "daemon 1 stops cleanly"
is "$(cat "$TF" 2>/dev/null)" "$NEW" "the token file is not removed when one of two daemons stops"
is "$(code 2 "$NEW")" 404 "... and the daemon still running accepts the token"
stop_d 2
is "$(cat "$TF" 2>/dev/null)" "$NEW" "nor when the last one stops"
start_d 3 || bail "daemon 3"
is "$(code 3 "$NEW")/$(code 3 "$TOKEN")/$(cat "$TF")" "404/401/$NEW" "a later daemon accepts the stored token and leaves the file"
stop_d 3

# ---- a version-2 store of a build without the table ----
"$SQLITE3_SHELL" "$DB" "DROP TABLE operator_token" || bail "drop table"
start_d 4 || bail "daemon 4"
T4=$(cat "$TF")
ok "$([ "$T4" != "$NEW" ] && [ "$(code 4 "$T4")" = 404 ] && [ "$(code 4 "$NEW")" = 401 ]; echo $?)" \
  "a store without the table gets it on a daemon's start, with a new token written to the file"
stop_d 4
done_testing
