#!/bin/bash
# worldd profile list / show: every layer in text and JSON, the seccomp
# filter as PFC and raw BPF; what the filter promises is in the export.
. "$top_srcdir/tests/tap.sh"
run_capture out err rc "$WORLDD" profile list
is "$rc" 0 "profile list: exit 0"
is "$(printf '%s\n' "$out" | awk '{print $1}' | tr '\n' ' ')" "transition source-check tool-run " "three profiles"
for p in transition source-check tool-run; do
  run_capture out err rc "$WORLDD" profile show $p
  is "$rc" 0 "$p text: exit 0"
  missing=""
  for layer in namespaces identity mounts rlimits cgroups limits privileges environment landlock seccomp; do
    printf '%s\n' "$out" | grep -q "^\[$layer\]" || missing="$missing $layer"
  done
  is "$missing" "" "$p text covers all 10 layers"
  run_capture out err rc "$WORLDD" profile show $p --format json
  is "$rc" 0 "$p json: exit 0"
  keys=$(printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join(k for k in ["namespaces","mounts","rlimits","cgroups","landlock","environment","seccomp","capabilities","no_new_privs","identity"] if k in d))')
  is "$keys" "namespaces mounts rlimits cgroups landlock environment seccomp capabilities no_new_privs identity" "$p json has every layer"
done
run_capture out err rc "$WORLDD" profile show transition --format json
ns=$(printf '%s' "$out" | python3 -c 'import json,sys; print(",".join(json.load(sys.stdin)["namespaces"]))')
is "$ns" "user,mount,pid,net,ipc,uts,cgroup" "transition: all seven namespaces"
env=$(printf '%s' "$out" | python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["environment"]))')
is "$env" "AILANG_FS_SANDBOX=/ AILANG_RELAX_MODULES=1 AILANG_CACHE_DIR=/.capsule-cache" "environment is exactly the §2 three"
allowed=$(printf '%s' "$out" | python3 -c 'import json,sys; print(" ".join(r["syscall"] for r in json.load(sys.stdin)["seccomp"]["rules"] if r["rule"].startswith("allow")))')
bad=""
for s in io_uring_setup io_uring_enter bpf userfaultfd keyctl perf_event_open unshare setns mount ptrace socket execve; do
  case " $allowed " in *" $s "*) bad="$bad $s";; esac
done
is "$bad" "" "none of the dangerous syscalls is on the allowlist"

run_capture out err rc "$WORLDD" profile show transition --format pfc
is "$rc" 0 "pfc: exit 0"
like "$out" "filter for arch x86_64" "pfc: x86_64 filter"
like "$out" 'a1.lo32 & 0xffffffff == 21505' "pfc: ioctl TCGETS compared under a 32-bit mask"
unlike "$out" '== 21522' "pfc: TIOCSTI (21522) appears nowhere"
like "$out" 'syscall "clone3".*' "pfc: clone3 has its own rule"
like "$(printf '%s\n' "$out" | grep -A1 '# default action' | tail -1)" 'action 0x7fc00000' "pfc: the default action is SECCOMP_RET_USER_NOTIF (0x7fc00000)"
like "$(printf '%s\n' "$out" | grep -A1 '# invalid architecture action' | tail -1)" 'action KILL_PROCESS' "pfc: a foreign architecture kills the process"
b=$(mktemp)
"$WORLDD" profile show transition --format bpf > "$b"
sz=$(stat -c %s "$b")
ok $([ "$sz" -gt 0 ] && [ $((sz % 8)) -eq 0 ] && echo 0 || echo 1) "bpf: a whole number of 8-byte instructions ($sz bytes)"
"$WORLDD" profile show transition --format bpf | cmp -s - "$b"; ok $? "bpf export is deterministic (diffable)"
rm -f "$b"
# tool-run lists its worktree mount (read-only) and its landlock rule
out=$("$WORLDD" profile show tool-run)
like "$out" '/work +bind of the caller.s worktree \(optional\), ro,nosuid,nodev,noexec' "tool-run text: the /work mount, read-only"
like "$out" 'worktree +read_file,read_dir' "tool-run text: landlock grants read only on the worktree"
wt=$("$WORLDD" profile show tool-run --format json | python3 -c 'import json,sys; d=json.load(sys.stdin)
print([m["options"] for m in d["mounts"] if m["path"] == "/work"][0].split(",")[0])')
is "$wt" ro "tool-run json: the /work mount is ro"
out=$("$WORLDD" profile show transition)
unlike "$out" '/work' "transition: no worktree mount"
run_capture out err rc "$WORLDD" profile show nope
is "$rc" 4 "unknown profile: exit 4"
run_capture out err rc "$WORLDD" profile show transition --format yaml
is "$rc" 2 "unknown format: exit 2"
done_testing
