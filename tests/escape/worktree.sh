#!/bin/bash
# Escape suite, the worktree of a tool run: `worldd run --profile tool-run
# --worktree W` mounts W read-only at /work. The probe, as the interpreter,
# reads a worktree file (allowed), tries to write into the worktree, to read
# a host file outside it (by path, through a symlink in the worktree, through
# /work/..) and lists the root; as root and as uid 65534. The controls: the
# same attempts unconfined reach the worktree for writing and the host file
# for reading. W is unchanged afterwards. See docs/escape-suite.md.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/escape/lib.sh"
if ! esc_have_run || ! "$WORLDD" run --help 2>&1 | grep -q -- --worktree; then
  skip "worldd run --worktree is not available" "worktree escape attempts"
  done_testing
  exit $?
fi
esc_setup
W="$ESC_WORK/worktree"
mkdir -p "$W/sub" && chmod 755 "$W" "$W/sub"
printf 'worktree readme\n' >"$W/readme.txt" && chmod 644 "$W/readme.txt"
ln -s "$ESC_SECRET" "$W/secret-link"

# one USER ATTEMPT KEY=JSON...: the probe runs ATTEMPT in a tool-run capsule
# with W at /work; sets out err rc and v (the attempt's verdict string).
one() {
  local user=$1 att=$2 kv extra=""; shift 2
  for kv in "$@"; do extra="$extra,\"${kv%%=*}\":${kv#*=}"; done
  local as=()
  [ "$user" = unpriv ] && as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  run_capture out err rc "${as[@]}" "$WORLDD" run --ailang-bin "$ESC_BIN" --source "$ESC_SRC" \
    --input "{\"mode\":\"one\",\"attempt\":\"$att\",\"tag\":\"$ESC_TAG\"$extra}" --profile tool-run --worktree "$W"
  v=$(printf '%s' "$out" | "$PY" -c 'import json,sys; print(list(json.load(sys.stdin).values())[0])' 2>/dev/null)
}

# Controls: unconfined, the same attempts get through.
"$ESC_BIN" control host_write "{\"host_dir\":\"$W\"}" 2>/dev/null
ok $? "control: unconfined, the probe creates a file in the worktree"
rm -f "$W/escape-probe-wrote"
"$ESC_BIN" control host_secret_file "{\"host_file\":\"$W/secret-link\"}" 2>/dev/null
ok $? "control: unconfined, the worktree's symlink reaches the host secret"
"$ESC_BIN" control host_secret_file "{\"host_file\":\"$W/../secret.txt\"}" 2>/dev/null
ok $? "control: unconfined, worktree/.. reaches the host secret"
before=$(cd "$W" && ls -lAR --time-style=+%s . | sort)

for user in $(esc_users); do
  one "$user" host_secret_file 'host_file="/work/readme.txt"'
  like "$v" "^open: read 16 bytes of /work/readme.txt" "$user: a worktree file is readable at /work ($rc)"
  one "$user" host_write 'host_dir="/work"'
  like "$v" "^blocked: create /work/escape-probe-wrote: EROFS" "$user: creating a file in the worktree: EROFS"
  one "$user" host_write 'host_dir="/work/sub"'
  like "$v" "^blocked: .*EROFS" "$user: creating a file in a worktree subdirectory: EROFS"
  one "$user" host_secret_file "host_file=\"$ESC_SECRET\""
  like "$v" "^blocked: open .*: ENOENT" "$user: the host secret by its path: not there"
  one "$user" host_secret_file 'host_file="/work/secret-link"'
  like "$v" "^blocked: open .*: ENOENT" "$user: the worktree's symlink to the secret resolves inside the capsule"
  one "$user" host_secret_file 'host_file="/work/../secret.txt"'
  like "$v" "^blocked: open .*: ENOENT" "$user: /work/.. is the capsule root"
  one "$user" host_root_listing
  names=$(printf '%s' "$v" | sed 's/^[a-z]*: [^:]*: //' | tr ',' '\n' | sort | tr '\n' ' ')
  is "$names" ".capsule-cache args.json dev host work " \
    "$user: the root holds the staged files, the cache, the tool devices and /work, nothing else"
  one "$user" exec_written_file
  like "$v" "^blocked" "$user: nothing can be written and run ($v)"
done

after=$(cd "$W" && ls -lAR --time-style=+%s . | sort)
is "$after" "$before" "the worktree is unchanged"
[ ! -e "$W/escape-probe-wrote" ]; ok $? "no file was created in the worktree"
done_testing
