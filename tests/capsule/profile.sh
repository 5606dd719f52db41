#!/bin/bash
# worldd profile list / show: every layer in text and JSON, the seccomp
# filter as PFC and raw BPF; what the filter promises is in the export.
. "$top_srcdir/tests/tap.sh"
run_capture out err rc "$WORLDD" profile list
is "$rc" 0 "profile list: exit 0"
is "$(printf '%s\n' "$out" | awk '{print $1}' | tr '\n' ' ')" "transition source-check tool-run exec " "four profiles"
for p in transition source-check tool-run exec; do
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
like "$out" '/work +read_file,read_dir \(when a worktree is given\)' "tool-run text: landlock grants read only on the worktree"
wt=$("$WORLDD" profile show tool-run --format json | python3 -c 'import json,sys; d=json.load(sys.stdin)
print([m["options"] for m in d["mounts"] if m["path"] == "/work"][0].split(",")[0])')
is "$wt" ro "tool-run json: the /work mount is ro"
out=$("$WORLDD" profile show transition)
unlike "$out" '/work' "transition: no worktree mount"
# exec (issue 40): its mounts, landlock rules and allowlist as the capsule makes them
out=$("$WORLDD" profile show exec --format json)
mounts=$(printf '%s' "$out" | python3 -c 'import json,sys; print(" ".join(m["path"] for m in json.load(sys.stdin)["mounts"]))')
is "$mounts" "/ /usr /bin /sbin /lib /lib32 /lib64 /libx32 /etc /dev /etc/... /tmp READ_ROOT /proc /work /work/PROTECTED /cache" "exec json: its mounts in order"
allowed=$(printf '%s' "$out" | python3 -c 'import json,sys; print(" ".join(r["syscall"] for r in json.load(sys.stdin)["seccomp"]["rules"] if r["rule"].startswith("allow")))')
bad=""
for s in io_uring_setup io_uring_enter bpf userfaultfd keyctl add_key perf_event_open unshare setns mount ptrace kexec_load init_module; do
  case " $allowed " in *" $s "*) bad="$bad $s";; esac
done
is "$bad" "" "exec: none of the dangerous syscalls is on the allowlist"
like " $allowed " " execve " "exec: execve allowed (toolchains)"
sock=$(printf '%s' "$out" | python3 -c 'import json,sys; print([r["rule"] for r in json.load(sys.stdin)["seccomp"]["rules"] if r["syscall"] == "socket"][0])')
is "$sock" "allow if arg0 is AF_UNIX, AF_INET or AF_INET6; AF_NETLINK: errno EAFNOSUPPORT" "exec: socket only of the local families"
modes=$(printf '%s' "$out" | python3 -c 'import json,sys; print(" ".join(sorted(r["syscall"] + ":" + r["rule"][10:14] for r in json.load(sys.stdin)["seccomp"]["rules"] if "06000" in r["rule"])))')
is "$modes" "chmod:arg1 creat:arg1 fchmod:arg1 fchmodat2:arg2 fchmodat:arg2 mkdir:arg1 mkdirat:arg2 mknod:arg1 mknodat:arg2 open:arg2 openat:arg3" \
  "exec: a mode with setuid/setgid is refused (EPERM) on every call that sets one, each on its mode argument"
o2=$(printf '%s' "$out" | python3 -c 'import json,sys; r=[r for r in json.load(sys.stdin)["seccomp"]["rules"] if r["syscall"] == "openat2"][0]; print(r["rule"], r["errno"])')
is "$o2" "errno Function not implemented" "exec: openat2 (its mode behind a pointer) answered ENOSYS"
rw=$(printf '%s' "$out" | python3 -c 'import json,sys; print(" ".join(r["path"] for r in json.load(sys.stdin)["landlock"]["rules"] if "write_file" in r["access"]))')
is "$rw" "/dev/null /dev/zero /dev/full /dev/random /dev/urandom /work /cache /tmp /dev/shm" "exec: landlock lets it write only /work, /cache, /tmp, /dev/shm and the devices"
out=$("$WORLDD" profile show exec)
like "$out" '/etc/\.\.\. +mask: shadow' "exec text: /etc's secrets masked"
like "$out" 'chmod +allow if \(arg1 & 06000\) == 0; S_ISUID or S_ISGID in arg1: errno EPERM' "exec text: chmod's mode rule"
like "$out" 'openat +allow if \(arg3 & 06000\) == 0; S_ISUID or S_ISGID in arg3: errno EPERM' "exec text: openat's mode rule (its mode is arg3)"
like "$out" '/etc/\.\.\. +mask: .*[ ,]world([ ,]|$)' "exec text: /etc/world (the daemon's own secrets) masked"
run_capture out err rc "$WORLDD" profile show exec --format pfc
like "$out" 'syscall "socket"' "exec pfc: socket has its own rule"
run_capture out err rc "$WORLDD" profile diff tool-run exec
like "$out" 'execve' "diff tool-run exec names execve"
run_capture out err rc "$WORLDD" profile show nope
is "$rc" 4 "unknown profile: exit 4"
run_capture out err rc "$WORLDD" profile show transition --format yaml
is "$rc" 2 "unknown format: exit 2"
# Every value as applied (issue 25, item 2): each rlimit soft/hard, the
# arch and x32 guards in every format, this host's cgroups and landlock ABI.
run_capture out err rc "$WORLDD" profile show transition --format json
rl=$(printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin)["rlimits"]; print(len(d), d["RLIMIT_CPU"]["soft"], d["RLIMIT_CPU"]["hard"], d["RLIMIT_CORE"]["hard"])')
is "$rl" "11 5 6 0" "json: 11 rlimits soft/hard; CPU 5/6 (hard one above soft); CORE 0"
g=$(printf '%s' "$out" | python3 -c 'import json,sys; g=json.load(sys.stdin)["seccomp"]["arch_guards"]; print(g["arch"], g["other_arch_action"], g["x32_guard"])')
is "$g" "x86_64 KILL_PROCESS (0x80000000) nr >= 0x40000000 and nr != -1 -> KILL_PROCESS" "json: arch and x32 guards read back from the BPF"
h=$(printf '%s' "$out" | python3 -c 'import json,sys; h=json.load(sys.stdin)["this_host"]; print(type(h["landlock_abi"]).__name__, bool(h["cgroup_memory"]["where"]), bool(h["cgroup_pids"]["where"]))')
is "$h" "int True True" "json: this host's landlock ABI and where the cgroups go (or why none)"
out=$("$WORLDD" profile show transition)
like "$out" 'RLIMIT_CPU +5 / 6' "text: RLIMIT_CPU soft 5 / hard 6"
like "$out" 'x32 guard: +nr >= 0x40000000 and nr != -1 -> KILL_PROCESS' "text: the x32 guard"
like "$out" '/args.json +write_file,read_file,truncate' "text: landlock rule of the writable args.json"
like "$out" 'here, pids: (v1|v2|none)' "text: this host's pids placement"
pfc=$("$WORLDD" profile show transition --format pfc)
like "$pfc" 'if \(\$syscall >= 1073741824 && \$syscall != 4294967295\)' "pfc: the x32 guard written in"

# profile diff (issue 25, item 3)
run_capture out err rc "$WORLDD" profile diff transition transition --exit-code
is "$rc" 0 "diff of a profile with itself: exit 0"
like "$out" 'no difference' "diff of a profile with itself: no difference"
run_capture out err rc "$WORLDD" profile diff transition tool-run --exit-code
is "$rc" 1 "diff transition tool-run --exit-code: 1 (they differ)"
like "$out" '~ rlimits.RLIMIT_CPU.soft: 5 -> 21' "diff: the CPU soft limit change"
like "$out" '\+ mounts\[path=/work\]' "diff: the /work mount added"
d=$(mktemp)
"$WORLDD" profile show transition --format json | python3 -c 'import json,sys
d=json.load(sys.stdin)
d["seccomp"]["rules"]=[r for r in d["seccomp"]["rules"] if r["syscall"]!="mincore"]+[{"syscall":"socket","rule":"allow","why":"x"}]
d["rlimits"]["RLIMIT_NOFILE"]["hard"]=128
json.dump(d,sys.stdout)' >"$d"
run_capture out err rc "$WORLDD" profile diff transition --against "$d" --json
c=$(printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["same"], " ".join("%s:%s" % (c["op"], c["path"]) for c in d["changes"]))')
is "$c" "False changed:rlimits.RLIMIT_NOFILE.hard removed:seccomp.rules[syscall=socket] added:seccomp.rules[syscall=mincore]" "diff --against a saved older profile: exactly the three changes"
echo '{"a":1}' >"$d"
run_capture out err rc "$WORLDD" profile diff transition --against "$d"
is "$rc" 3 "diff --against a JSON file that is not a profile: exit 3"
run_capture out err rc "$WORLDD" profile diff transition --against "$d.absent"
is "$rc" 4 "diff --against a missing file: exit 4"
rm -f "$d"
done_testing
