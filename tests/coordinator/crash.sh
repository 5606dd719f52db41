#!/bin/bash
# tests/coordinator/crash.sh: kill -9 of `worldd call` during an effect
# (after its intent is durable, before its outcome): ailang-run of a program
# that spins, so the Ailang.Run handler's capsule is running when the caller
# dies. Then: the capsule dies with its supervisor (PDEATHSIG), the
# indeterminate intent is reported, the store scans clean, the same task id
# is not re-run, and the spent budget stays spent.
. "$top_srcdir/tests/tap.sh"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
FIX="$top_builddir/tests/packages/packages-fixture"
ws=$T/ws; mkdir -p "$ws/ep1"
cred=$("$FIX" "$T" "$top_srcdir" ep1 "$top_srcdir/packages/se-tools/transitions.json" Ailang.Run=worktree:10) ||
  bail "fixture"
DB=$T/world.db
cat > "$ws/ep1/spin.ail" <<'AIL'
module spin
func spin(n: int, acc: int) -> int { if n == 0 then acc else spin(n - 1, acc + 1) }
export func main(input: string) -> string { "${show(spin(1000000000, 0))}" }
AIL
"$WORLDD" call --store "$DB" --session "$cred" --workspace-root "$ws" --tool-ailang-bin "$AILANG_LITE" \
  --task k1 ailang-run --json '{"path":"spin.ail"}' > "$T/out" 2> "$T/err" &
pid=$!
seen=""
for _ in $(seq 1 400); do
  if "$WORLDD" journal --store "$DB" --indeterminate 2>/dev/null | grep -q 'kind=effect subject=cli:ep1:k1#'; then
    seen=1; break
  fi
  sleep 0.05
done
is "$seen" 1 "the effect intent is durable (listed as without outcome) while the handler runs"
capsules_before=$(pgrep -c -P "$pid" || true)
kill -9 "$pid"; wait "$pid" 2>/dev/null; st=$?
is "$st" 137 "worldd call killed with SIGKILL mid-effect"
gone=""
for _ in $(seq 1 100); do
  if ! pgrep -f "$T/" >/dev/null 2>&1 && ! pgrep -f 'spin.ail' >/dev/null 2>&1; then gone=1; break; fi
  sleep 0.05
done
is "$gone" 1 "no capsule outlives the killed caller (it had $capsules_before child process(es))"
run_capture out err rc "$WORLDD" journal --store "$DB" --indeterminate
like "$out" "indeterminate intent=[0-9]+ kind=effect subject=cli:ep1:k1#e1 ref=sha256:" "after reopening, the effect is reported indeterminate"
like "$out" "kind=invocation subject=cli:ep1:k1 " "... and so is the invocation"
like "$out" "2 indeterminate intent\(s\)" "... two intents without outcome"
run_capture out err rc "$WORLDD" scan --store "$DB"
is "$rc:$out" "0:" "the store scans clean"
run_capture out err rc "$WORLDD" call --store "$DB" --session "$cred" --workspace-root "$ws" --tool-ailang-bin "$AILANG_LITE" \
  --task k1 ailang-run --json '{"path":"spin.ail"}'
is "$rc" 8 "the same task id is refused, not re-run"
like "$err" "indeterminate effect.*not re-run" "... saying why"
run_capture out err rc "$WORLDD" journal --store "$DB" --indeterminate
like "$out" "2 indeterminate intent\(s\)" "the intents are not closed silently"
if [ -n "$SQLITE3_SHELL" ]; then
  is "$("$SQLITE3_SHELL" "$DB" "select sum(cost) from journal where phase='intent' and kind='effect' and episode='ep1'")" 1 \
    "the indeterminate effect's cost stays charged"
  is "$("$SQLITE3_SHELL" "$DB" 'select count(*) from log_entries')" 0 "nothing was committed to the log"
else
  skip "no sqlite3 shell" "cost charged"; skip "no sqlite3 shell" "log empty"
fi
done_testing
