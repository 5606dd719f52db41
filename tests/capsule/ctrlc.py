#!/usr/bin/env python3
"""tests/capsule/ctrlc.py: run a command with a pseudo-terminal as its
controlling terminal and, once told to, type Ctrl-C on that terminal.

usage: ctrlc.py --out F --err F --pid F --go F -- CMD ARGS...

The child is a new session whose controlling terminal is the pty slave
(TIOCSCTTY) and the terminal's foreground process group; stdin is the
slave, stdout and stderr go to the files; SIGINT, SIGQUIT, SIGTERM and
SIGHUP have their default disposition (as a shell at a terminal gives). Its pid is written to --pid.
When the file --go exists, the terminal's interrupt character (^C, with
ISIG on: the kernel's tty driver sends SIGINT to the foreground process
group, as at a real terminal) is typed. Exits with the child's exit
status (128+N when a signal killed it). The waits are hang guards
(120 s), never assertions."""
import argparse
import fcntl
import os
import select
import signal
import sys
import termios
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--err", required=True)
    ap.add_argument("--pid", required=True)
    ap.add_argument("--go", required=True)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    master, slave = os.openpty()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(master)
            # as an interactive shell starts a command: a background job of
            # a script has SIGINT ignored, and an ignored signal is inherited
            for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGHUP):
                signal.signal(sig, signal.SIG_DFL)
            os.setsid()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
            os.dup2(slave, 0)
            out = os.open(a.out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            err = os.open(a.err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(out, 1)
            os.dup2(err, 2)
            for fd in (out, err, slave):
                if fd > 2:
                    os.close(fd)
            os.execvp(cmd[0], cmd)
        except Exception as e:  # noqa: BLE001
            os.write(2, ("ctrlc.py: %s\n" % e).encode())
        os._exit(127)
    os.close(slave)
    with open(a.pid, "w") as f:
        f.write("%d\n" % pid)
    status = None
    typed = False
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        r, _, _ = select.select([master], [], [], 0.05)
        if r:
            try:
                os.read(master, 4096)
            except OSError:
                pass  # EIO: every slave fd is closed
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
            break
        if not typed and os.path.exists(a.go):
            typed = True
            os.write(master, termios.tcgetattr(master)[6][termios.VINTR])
    if status is None:
        os.kill(pid, 9)  # the hang guard ran out: never leave the child behind
        _, status = os.waitpid(pid, 0)
    os.close(master)
    sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


if __name__ == "__main__":
    main()
