#!/usr/bin/env python3
"""tests/escape/judge.py: runs the escape probe in capsules and judges it.

Called by confined.sh and posture.sh. Every verdict is one line on stdout,
    ok<TAB>description[<TAB>detail]     not ok<TAB>...     skip<TAB>...
which the shell turns into TAP assertions (tests/tap.sh). Subcommands:

  attempts   one capsule run per escape attempt (the capsule ends a run at
             the first refused syscall, so attempts cannot share a run), plus
             one run of the whole batch
  resource   the resource attempts: each must end by the capsule's limits or
             deadline with the right error, leaving no process behind
  posture    the probe's posture report from inside, and the capsule process
             seen from the host's /proc, both compared with
             `worldd profile show transition --format json`

Exit codes of `worldd run` (worldd run --help): 0 ok, 11 deadline,
12 output cap, 13 not an object, 14 interpreter failed, 17 syscall denied.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

WX_OK, WX_DEADLINE, WX_OUTPUT_CAP, WX_INTERP, WX_DENIED, WX_CHECK_REFUSED = 0, 11, 12, 14, 17, 19
MiB = 1 << 20

# The syscall a capsule's denial report must name for attempts whose first
# refused call is certain. Others only need to name some syscall.
EXPECTED_DENIAL = {
    "net_tcp_host": "socket", "net_udp_host": "socket", "net_abstract_unix": "socket",
    "net_unix_path": "socket", "net_netlink": "socket", "net_raw": "socket",
    "net_packet": "socket", "net_vsock": "socket",
    "ptrace_host": "ptrace", "process_vm_host": "process_vm_readv",
    "pidfd_getfd_host": "pidfd_open", "ipc_host_shm": "shmctl", "setns": "pidfd_open",
    "mount_tmpfs": "mount", "fsopen": "fsopen", "unshare_user": "unshare",
    "unshare_mount": "unshare", "unshare_net": "unshare", "clone_newuser": "clone",
    "chroot": "chroot", "keyctl": "add_key", "bpf": "bpf",
    "perf_event_open": "perf_event_open", "io_uring": "io_uring_setup",
    "userfaultfd": "userfaultfd", "tiocsti": "ioctl(TIOCSTI)",
    "tiocsti_high_bits": "ioctl(TIOCSTI)", "reboot": "reboot",
    "module_load": "finit_module", "mknod": "mknodat",
    "open_by_handle_at": "name_to_handle_at", "clock_settime": "clock_settime",
    "clock_adjtime": "clock_adjtime", "sethostname": "sethostname",
    "syslog_read": "syslog",
}
# Attempts on a non-native ABI: the filter kills the process outright.
BAD_ARCH = {"x32_syscall", "i386_syscall"}

# profile namespace names -> /proc/PID/ns names and the probe's keys
NS_MAP = {"user": "user", "mount": "mnt", "pid": "pid", "net": "net", "ipc": "ipc",
          "uts": "uts", "cgroup": "cgroup"}

# a refused syscall named by the capsule -> the posture item that made it
POSTURE_ITEM = [
    (re.compile(r"AMBIENT|prctl\(\?\)"), "caps"),
    (re.compile(r"capget|CAPBSET"), "caps"),
    (re.compile(r"SECCOMP"), "seccomp"),
    (re.compile(r"NO_NEW_PRIVS"), "no_new_privs"),
    (re.compile(r"pidfd_open|ioctl"), "namespaces"),
    (re.compile(r"landlock"), "landlock"),
]


def host_lacks_i386(probe, params):
    """The unconfined control of i386_syscall says the kernel has no int $0x80
    entry (exit 3, "unsupported"): then a confined SIGSEGV is the kernel's
    doing, not the filter's, and the attempt cannot apply here."""
    try:
        c = subprocess.run([probe, "control", "i386_syscall", json.dumps(params)],
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return c.returncode == 3 and "no i386 entry point" in c.stderr


def say(verdict, desc, detail=""):
    line = verdict + "\t" + desc.replace("\t", " ").replace("\n", " ")
    if detail:
        line += "\t" + str(detail).replace("\t", " ").replace("\n", " | ")[:1500]
    print(line, flush=True)


def check(cond, desc, detail=""):
    say("ok" if cond else "not ok", desc, "" if cond else detail)
    return cond


class Run:
    def __init__(self, rc, out, err, elapsed, maxrss_kb):
        self.rc, self.out, self.err = rc, out, err
        self.elapsed, self.maxrss_kb = elapsed, maxrss_kb

    def obj(self):
        try:
            o = json.loads(self.out)
            return o if isinstance(o, dict) else None
        except ValueError:
            return None

    def denied(self):
        m = re.search(r"syscall denied: ([A-Za-z0-9_]+(?:\([A-Za-z0-9_?]+\))?)", self.err)
        return m.group(1) if m else None

    def detail(self):
        return "exit %s, stdout %r, stderr %r" % (self.rc, self.out[:300], self.err[:500])


def setpriv(user):
    if user == "unpriv" and os.geteuid() == 0:
        return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    return []


def run_capsule(a, user, inp, timeout_ms, background=False, env=None):
    """Run the probe in a capsule through worldd; wait4 gives the worldd
    process tree's peak RSS (the supervisor must not hold a flood).
    With --verb check the attempt travels in the source, for the
    source-check profile, which runs only `BIN check FILE`."""
    if a.verb == "check":
        fd, src = tempfile.mkstemp(suffix=".ail", dir=a.cwd)
        with os.fdopen(fd, "w") as f:
            f.write("-- escape-probe: %s\n" % json.dumps(inp))
        os.chmod(src, 0o644)
        cmd = setpriv(user) + [a.worldd, "check", "--ailang-bin", a.bin, "--source", src,
                               "--timeout-ms", str(timeout_ms)]
        try:
            return run_cmd(cmd, a, timeout_ms, background)
        finally:
            os.unlink(src)
    if a.verb == "invoke":
        # the product path: the supervisor's admission, agent and protocol
        cmd = setpriv(user) + [a.worldd, "invoke", "--ailang-bin", a.bin, "--source", a.source,
                               "--input", json.dumps(inp), "--timeout-ms", str(timeout_ms)]
        return run_cmd(cmd, a, timeout_ms, background, env)
    cmd = setpriv(user) + [a.worldd, "run", "--ailang-bin", a.bin, "--source", a.source,
                           "--input", json.dumps(inp), "--timeout-ms", str(timeout_ms)]
    if a.profile_name:
        cmd += ["--profile", a.profile_name]
    if a.spawner:
        cmd += ["--spawner"]
    return run_cmd(cmd, a, timeout_ms, background, env)


def run_cmd(cmd, a, timeout_ms, background, env=None):
    fo = tempfile.TemporaryFile()
    fe = tempfile.TemporaryFile()
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=fo, stderr=fe, cwd=a.cwd, env=env)
    RUN_PIDS.append(p.pid)
    if background:
        return p, fo, fe, t0
    return finish_capsule(p, fo, fe, t0, timeout_ms)


def finish_capsule(p, fo, fe, t0, timeout_ms):
    # liveness bound only (a hung supervisor must not hang the suite); never
    # a performance threshold
    limit = t0 + timeout_ms / 1000.0 + 60
    rc, ru = None, None
    while rc is None:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid == p.pid:
            rc = os.waitstatus_to_exitcode(status)
            p.returncode = rc
            break
        if time.monotonic() > limit:
            p.kill()
            pid, status, ru = os.wait4(p.pid, 0)
            p.returncode = -9
            rc = "hung (killed by the test after %d s)" % int(limit - t0)
            break
        time.sleep(0.005)
    elapsed = time.monotonic() - t0
    fo.seek(0)
    fe.seek(0)
    out = fo.read(2 * MiB).decode("utf-8", "replace").strip()
    err = fe.read(64 * 1024).decode("utf-8", "replace").strip()
    fo.close()
    fe.close()
    return Run(rc, out, err, elapsed, ru.ru_maxrss if ru else 0)


# Every worldd pid the judge ran; capsule cgroups are named after it
# (world-capsule-PID-N, below the caller's own group).
RUN_PIDS = []
ARGS = None


def own_cgroup_dirs():
    dirs = []
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, ctl, path = line.rstrip("\n").split(":", 2)
                if ctl == "":
                    base = "/sys/fs/cgroup/unified"
                elif ctl.startswith("name="):
                    continue
                else:
                    base = "/sys/fs/cgroup/" + ctl
                d = base + path
                if os.path.isdir(d):
                    dirs.append(d)
    except OSError:
        pass
    return dirs


def leftover_cgroups():
    """Capsule cgroups of our (finished) worldd runs still present."""
    left = []
    pids = set(RUN_PIDS)
    for d in own_cgroup_dirs():
        try:
            for e in os.listdir(d):
                m = re.match(r"world-capsule-(\d+)-", e)
                if m and int(m.group(1)) in pids:
                    left.append(os.path.join(d, e))
        except OSError:
            pass
    return left


def check_cgroups(what):
    if ARGS.spawner:
        # The capsules' groups are named after the spawner (a child of
        # worldd the judge never sees): their removal when it exits is
        # tests/supervisor/test_spawner's.
        say("skip", "%s: no capsule cgroup left behind" % what,
            "groups named after the spawner; test_spawner checks their removal")
        return
    left = leftover_cgroups()
    deadline = time.monotonic() + 1.0
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = leftover_cgroups()
    check(not left, "%s: no capsule cgroup left behind by any of the %d runs" % (what, len(RUN_PIDS)),
          " ".join(left[:6]))


def tagged_pids(tag):
    found = []
    needle = ("escprobe:" + tag).encode()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                if needle in f.read():
                    found.append(int(d))
        except OSError:
            pass
    return found


def no_strays(tag, what):
    """The capsule must leave no process behind once worldd has returned."""
    left = tagged_pids(tag)
    deadline = time.monotonic() + 1.0
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = tagged_pids(tag)
    check(not left, "%s: no capsule process left behind" % what, "stray pids %s" % left)


def base_params(a):
    return json.loads(a.params)


# ------------------------------------------------------------------ attempts

def cmd_attempts(a):
    user = a.user
    names = [n for n in a.names.split(",") if n]
    params = base_params(a)
    # the whole batch in one run: every attempt blocked, or the filter ended
    # the capsule at the first refused call (this capsule's policy)
    inp = dict(params, mode="attempts")
    r = run_capsule(a, user, inp, 20000) if not a.no_batch else None
    o = r.obj() if r else None
    if r is None:
        pass
    elif r.rc == WX_OK and o is not None:
        bad = {k: v for k, v in o.items() if not str(v).startswith("blocked")}
        check(not bad, "confined (%s) batch: every attempt blocked in one run" % user, json.dumps(bad))
    else:
        check(r.rc == WX_DENIED and r.denied(),
              "confined (%s) batch: the filter ended the capsule at the first refused call (%s)"
              % (user, r.denied()), r.detail())
    for n in names:
        inp = dict(params, mode="one", attempt=n)
        r = run_capsule(a, user, inp, 8000)
        o = r.obj()
        desc = "confined (%s%s) %s" % (user, a.label, n)
        if a.verb == "check" and r.rc == WX_OK:
            say("ok", "%s: blocked (the probe reported blocked, so the check accepted)" % desc)
        elif a.verb == "check" and r.rc == WX_CHECK_REFUSED:
            say("not ok", "%s is blocked" % desc, r.detail())
        elif r.rc == WX_OK and o is not None and n in o:
            v = str(o[n])
            check(v.startswith("blocked"), "%s: %s" % (desc, v[:160]), v)
        elif r.rc == WX_DENIED and r.denied():
            got, want = r.denied(), EXPECTED_DENIAL.get(n)
            if want:
                check(got == want, "%s is stopped by the filter, reported as %s" % (desc, got),
                      "expected the report to name %s; %s" % (want, r.detail()))
            else:
                say("ok", "%s is stopped by the filter, reported as %s" % (desc, got))
        elif r.rc == WX_INTERP and n in BAD_ARCH and re.search(r"SIGSYS|signal 31|system call", r.err):
            say("ok", "%s: the non-native ABI kills the process (%s)" % (desc, r.err.splitlines()[0][:120]))
        elif n == "i386_syscall" and re.search(r"SIGSEGV|signal 11", r.err + str((o or {}).get(n, ""))) \
                and host_lacks_i386(a.bin, params):
            say("skip", "%s: this kernel has no i386 entry point (the unconfined control gets SIGSEGV too)" % desc)
        else:
            say("not ok", "%s is blocked" % desc, r.detail())
        if n in ("exec_host_binary", "clone_newuser", "clone3_newuser"):
            no_strays(params["tag"], desc)
    check_cgroups("confined (%s%s) attempts" % (user, a.label))


# ------------------------------------------------------------------ resource

def load_profile(path):
    if not path:
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def soft_limits(prof):
    """{"RLIMIT_X": soft} of a profile (profile show prints soft and hard)."""
    return {k: v["soft"] for k, v in prof.get("rlimits", {}).items() if isinstance(v, dict)}


def first_num(s, pat):
    m = re.search(pat, s)
    return int(m.group(1)) if m else None


def cmd_resource(a):
    user = a.user
    params = base_params(a)
    prof = load_profile(a.profile) or {}
    rl = soft_limits(prof)
    cg = prof.get("cgroups", {})
    lim = prof.get("limits", {})
    pids_lim = min(x for x in [cg.get("pids"), rl.get("RLIMIT_NPROC"), 4096] if x)
    as_mib = (rl.get("RLIMIT_AS") or 4096 * MiB) // MiB
    data_mib = min(as_mib, (rl.get("RLIMIT_DATA") or as_mib * MiB) // MiB)
    mem_mib = min(data_mib, (cg.get("memory_bytes") or as_mib * MiB) // MiB)
    stdout_cap = lim.get("stdout_cap") or 8 * MiB
    tag = params["tag"]

    def go(name, timeout_ms, **kw):
        inp = dict(params, mode="resource", attempt=name, **kw)
        r = run_capsule(a, user, inp, timeout_ms)
        return r, (r.obj() or {}).get(name, "")

    d = "confined (%s%s) fork_bomb" % (user, a.label)
    r, v = go("fork_bomb", 8000, cap_procs=2048, cap_ms=4000)
    if r.rc == WX_OK:
        n = first_num(v, r"at (\d+) processes")
        check(v.startswith("blocked: fork failed") and n is not None and n <= pids_lim,
              "%s: fork refused at %s processes (limit %d): %s" % (d, n, pids_lim, v[:80]), r.detail())
    else:
        check(r.rc == WX_DEADLINE, "%s: ended by the deadline" % d, r.detail())
    no_strays(tag, d)

    d = "confined (%s%s) memory_bomb" % (user, a.label)
    r, v = go("memory_bomb", 10000, cap_mb=min(4096, as_mib * 2))
    if r.rc == WX_OK:
        n = first_num(v, r"after (\d+) MiB")
        check(v.startswith("blocked: mmap failed") and n is not None and n <= data_mib,
              "%s: allocation refused after %s MiB (data/address-space limit %d MiB)" % (d, n, data_mib), r.detail())
    else:
        check(r.rc == WX_INTERP and re.search(r"memory|SIGKILL|signal 9|killed", r.err),
              "%s: killed at the memory limit (%d MiB): %s" % (d, mem_mib, r.err.splitlines()[0][:100] if r.err else ""),
              r.detail())
    no_strays(tag, d)

    d = "confined (%s%s) disk_fill" % (user, a.label)
    r, v = go("disk_fill", 10000, cap_mb=1024)
    fsize = (rl.get("RLIMIT_FSIZE") or 0) // 1024
    cache = 0
    for m in prof.get("mounts", []):
        if m.get("path") == "/.capsule-cache":
            cache = (m.get("size") or 0) // 1024
    bound = max(fsize, cache) or 1 << 30
    kib = first_num(v, r"after (\d+) KiB")
    check(r.rc == WX_OK and v.startswith("blocked") and (kib is None or kib <= bound),
          "%s: writing stopped at %s KiB (bound %d KiB): %s" % (d, kib, bound, v[:90]), r.detail())
    no_strays(tag, d)

    for name in ("cpu_spin", "sleep_forever"):
        d = "confined (%s%s) %s" % (user, a.label, name)
        r, v = go(name, 1500, cap_ms=30000)
        check(r.rc == WX_DEADLINE and "deadline" in r.err, "%s: ended by the 1.5 s deadline (exit %s)" % (d, r.rc),
              r.detail())
        no_strays(tag, d)

    flood_mib = 256
    d = "confined (%s%s) stdout_flood" % (user, a.label)
    r, v = go("stdout_flood", 8000, cap_mb=flood_mib)
    check(r.rc == WX_OUTPUT_CAP, "%s: %d MiB on stdout ends the run at the %d MiB cap (exit %s)"
          % (d, flood_mib, stdout_cap // MiB, r.rc), r.detail())
    check(r.maxrss_kb * 1024 < flood_mib * MiB // 2,
          "%s: the supervisor held at most %d MiB of it" % (d, r.maxrss_kb // 1024), r.detail())
    no_strays(tag, d)

    d = "confined (%s%s) stderr_flood" % (user, a.label)
    r, v = go("stderr_flood", 8000, cap_mb=flood_mib)
    check(r.rc in (WX_OK, WX_DEADLINE, WX_OUTPUT_CAP),
          "%s: %d MiB on stderr: the run ends (exit %s)" % (d, flood_mib, r.rc), r.detail())
    check(r.maxrss_kb * 1024 < flood_mib * MiB // 2,
          "%s: the supervisor held at most %d MiB of it" % (d, r.maxrss_kb // 1024), r.detail())
    no_strays(tag, d)
    check_cgroups("confined (%s%s) resource attempts" % (user, a.label))


# ------------------------------------------------------------------ posture

def host_ns():
    out = {}
    for n in NS_MAP.values():
        try:
            out[n] = os.stat("/proc/self/ns/" + n).st_ino
        except OSError:
            pass
    return out


def posture_inside(a, user, params):
    """Posture from inside; an item the filter refuses is recorded and the
    report asked for again without it."""
    skipped, denials = [], {}
    for _ in range(8):
        inp = dict(params, mode="posture", skip=",".join(skipped))
        r = run_capsule(a, user, inp, 8000)
        o = r.obj()
        if r.rc == WX_OK and o is not None:
            return o, denials, r
        name = r.denied() if r.rc == WX_DENIED else None
        item = None
        for pat, it in POSTURE_ITEM:
            if name and pat.search(name) and it not in skipped:
                item = it
                break
        if not item:
            return None, denials, r
        skipped.append(item)
        denials[item] = name
    return None, denials, r


def parse_status(pid):
    st = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            st[k] = v.strip()
    return st


def cmd_posture(a):
    user = a.user
    params = base_params(a)
    prof = load_profile(a.profile)
    if prof is None:
        say("skip", "posture (%s): no profile JSON from worldd profile show transition --format json" % user)
        return
    hns = host_ns()
    ident = prof.get("identity", {})
    in_uid = ident.get("inside_uid")
    in_gid = ident.get("inside_gid")
    env_want = sorted(prof.get("environment", []))
    nss = [NS_MAP[n] for n in prof.get("namespaces", []) if n in NS_MAP]
    rl = prof.get("rlimits", {})
    d = "posture (%s%s, inside)" % (user, a.label)

    o, denials, r = posture_inside(a, user, params)
    if not check(o is not None, "%s: the probe reports its posture from inside the capsule" % d, r.detail()):
        return
    for item, name in denials.items():
        say("ok", "%s: reading %s was refused by the filter (%s); recorded" % (d, item, name))
    check(o.get("uid") == [in_uid] * 3 and o.get("gid") == [in_gid] * 3,
          "%s: uid/gid are the profile's inside ids (%s)" % (d, in_uid), json.dumps([o.get("uid"), o.get("gid")]))
    check(set(o.get("groups", [])) <= {65534}, "%s: no supplementary group mapped in" % d, o.get("groups"))
    if "caps" in o:
        caps = o["caps"]
        vals = [caps.get(k, "") for k in ("effective", "permitted", "inheritable", "bounding")]
        check(all(v == "0x0" for v in vals) and str(caps.get("ambient", "")).startswith("0x0"),
              "%s: every capability set is empty" % d, json.dumps(caps))
    if "no_new_privs" in o:
        check(o["no_new_privs"] == (1 if prof.get("no_new_privs") else 0),
              "%s: no_new_privs is %s as the profile says" % (d, o["no_new_privs"]), o["no_new_privs"])
    if "seccomp" in o:
        check(o["seccomp"] == 2, "%s: seccomp filter mode (2)" % d, o["seccomp"])
    if "namespaces" in o:
        same = [n for n in nss if o["namespaces"].get(n) == hns.get(n)]
        unread = [n for n in nss if not isinstance(o["namespaces"].get(n), int)]
        check(not same and not unread, "%s: own namespaces, none shared with the host: %s" % (d, ",".join(nss)),
              "shared %s unreadable %s: %s" % (same, unread, json.dumps(o["namespaces"])))
    else:
        # what it can see instead: pid 1 with no parent (pid ns), its own
        # hostname (uts), only the staged root (mount)
        # worldd run: the interpreter is pid 1, its parent outside; worldd
        # invoke: pid 2 under the capsule's agent (pid 1)
        check(o.get("pid") in (1, 2) and o.get("ppid") in (0, 1) and o.get("pid") > o.get("ppid"),
              "%s: pid %s of its own pid namespace, parent %s" % (d, o.get("pid"), o.get("ppid")),
              [o.get("pid"), o.get("ppid")])
    check(o.get("hostname") == prof.get("hostname"), "%s: hostname is the profile's %r" % (d, prof.get("hostname")),
          o.get("hostname"))
    fds = sorted(int(k) for k in o.get("fds", {}))
    check(set(fds) <= {0, 1, 2}, "%s: only fds 0-2 are open (%s)" % (d, fds), json.dumps(o.get("fds")))
    env = sorted("%s=%s" % kv for kv in o.get("env", {}).items())
    check(env == env_want, "%s: the environment is exactly the profile's" % d, json.dumps(env))
    check(o.get("cwd") == o.get("env", {}).get("AILANG_FS_SANDBOX"), "%s: cwd is the sandbox root" % d, o.get("cwd"))
    staged_top = {s.split("/")[0] for s in prof.get("staged", [])}
    check(set(o.get("root", [])) <= staged_top, "%s: the root holds only staged files (%s)"
          % (d, ",".join(sorted(o.get("root", [])))), json.dumps(o.get("root")))
    rlm = o.get("rlimits", {})
    want = {"as": "RLIMIT_AS", "data": "RLIMIT_DATA", "cpu": "RLIMIT_CPU", "fsize": "RLIMIT_FSIZE",
            "nofile": "RLIMIT_NOFILE", "nproc": "RLIMIT_NPROC", "stack": "RLIMIT_STACK", "core": "RLIMIT_CORE"}
    bad = {k: (rlm.get(k), rl.get(v)) for k, v in want.items()
           if v in rl and (not isinstance(rlm.get(k), list) or rlm[k] != [rl[v]["soft"], rl[v]["hard"]])}
    check(not bad, "%s: rlimits match the profile" % d, json.dumps(bad))

    # the same capsule seen from the host (root only: /proc of another uid)
    if os.geteuid() != 0:
        say("skip", "posture (%s, from the host): needs root to read another uid's /proc" % user)
        return
    d = "posture (%s%s, from the host)" % (user, a.label)
    inp = dict(params, mode="posture", linger_ms=2500, skip=",".join(denials))
    p, fo, fe, t0 = run_capsule(a, user, inp, 10000, background=True)
    pid, end = None, time.monotonic() + 5
    while pid is None and time.monotonic() < end:
        pids = tagged_pids(params["tag"])
        pid = pids[0] if pids else None
        time.sleep(0.02)
    if not check(pid is not None, "%s: found the capsule's interpreter by its tag" % d):
        finish_capsule(p, fo, fe, t0, 10000)
        return
    try:
        st = parse_status(pid)
        ns = {n: os.stat("/proc/%d/ns/%s" % (pid, n)).st_ino for n in nss}
        fdl = sorted(int(x) for x in os.listdir("/proc/%d/fd" % pid))
        with open("/proc/%d/environ" % pid, "rb") as f:
            envo = sorted(x.decode() for x in f.read().split(b"\0") if x)
        nspid = st.get("NSpid", "").split()
        init_host_pid = int(nspid[0]) if nspid and nspid[-1] == "1" else None
    except OSError as e:
        say("not ok", "%s: read /proc/%d" % (d, pid), str(e))
        finish_capsule(p, fo, fe, t0, 10000)
        return
    uids = st.get("Uid", "").split()
    base = ident.get("as_root_host_id", {}).get("base")
    if user == "unpriv":
        check(uids and all(u == "65534" for u in uids), "%s: runs as the caller's uid 65534" % d, st.get("Uid"))
    else:
        ok_uid = bool(uids) and all(u == uids[0] for u in uids) and base is not None and \
            base <= int(uids[0]) < base + 0x400000 and \
            (init_host_pid is None or int(uids[0]) == base + init_host_pid)
        check(ok_uid, "%s: runs as unprivileged host uid %s (base + capsule init pid)" % (d, uids[0] if uids else "?"),
              "Uid %s NSpid %s base %s" % (st.get("Uid"), st.get("NSpid"), base))
    for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        check(int(st.get(k, "1"), 16) == 0, "%s: %s is empty" % (d, k), st.get(k))
    check(st.get("NoNewPrivs") == "1", "%s: NoNewPrivs 1" % d, st.get("NoNewPrivs"))
    check(st.get("Seccomp") == "2", "%s: Seccomp 2 (filter)" % d, st.get("Seccomp"))
    same = [n for n in nss if ns[n] == hns.get(n)]
    check(not same, "%s: namespaces %s all differ from the host's" % (d, ",".join(nss)), "shared: %s" % same)
    check(set(fdl) <= {0, 1, 2}, "%s: open fds %s" % (d, fdl), fdl)
    check(envo == env_want, "%s: environ is exactly the profile's" % d, envo)
    # cgroups: started as root, the capsule gets its own memory and pids
    # groups below the supervisor's (this host: v1 hierarchies)
    if user == "root" and prof.get("cgroups", {}).get("pids"):
        def groups(path):
            out = {}
            with open(path) as f:
                for line in f:
                    _, ctl, where = line.rstrip("\n").split(":", 2)
                    for c in ctl.split(","):
                        out[c] = where
            return out
        try:
            mine, theirs = groups("/proc/self/cgroup"), groups("/proc/%d/cgroup" % pid)
            moved = [c for c in ("memory", "pids") if c in mine and theirs.get(c) != mine[c]]
            check(moved, "%s: has its own cgroup for %s" % (d, ",".join(moved) or "memory/pids"),
                  "capsule %s, supervisor side %s" % (theirs, mine))
        except OSError as e:
            say("not ok", "%s: read cgroups" % d, str(e))
    r = finish_capsule(p, fo, fe, t0, 10000)
    check(r.rc == WX_OK and r.obj() is not None, "%s: the lingering posture run ended normally" % d, r.detail())
    check_cgroups("posture (%s%s)" % (user, a.label))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["attempts", "resource", "posture"])
    ap.add_argument("--worldd", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--params", required=True)
    ap.add_argument("--user", default="root")
    ap.add_argument("--names", default="")
    ap.add_argument("--profile", default="")
    ap.add_argument("--cwd", default="/")
    ap.add_argument("--no-batch", action="store_true", help="skip the all-attempts run")
    ap.add_argument("--verb", default="run", choices=["run", "check", "invoke"])
    ap.add_argument("--profile-name", default="", help="worldd run --profile NAME")
    ap.add_argument("--spawner", action="store_true", help="worldd run --spawner (the daemon's capsule maker)")
    a = ap.parse_args()
    global ARGS
    ARGS = a
    a.label = ", " + a.verb if a.verb != "run" else (", " + a.profile_name if a.profile_name else "")
    if a.spawner:
        a.label += ", spawner"
    {"attempts": cmd_attempts, "resource": cmd_resource, "posture": cmd_posture}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
