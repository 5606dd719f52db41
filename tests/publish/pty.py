#!/usr/bin/env python3
"""tests/publish/pty.py: run a command with a pseudo-terminal as its
controlling terminal and answer its attended prompt there.

usage: pty.py --out F --err F --tty F [--stdin tty|null|pipe] [--after S]
              [--answer TEXT | --eof | --no-answer] -- CMD ARGS...

The child is a new session whose controlling terminal is the pty slave
(TIOCSCTTY); stdin is the slave (tty), /dev/null (null) or an empty pipe
carrying the answer (pipe); stdout and stderr go to the files. When the
terminal output ends with S (default "> "), TEXT + newline is typed (or ^D for
--eof). Everything written to the terminal goes to --tty. Exits with the
child's exit status. The waits are hang guards (120 s), never assertions."""
import argparse
import fcntl
import os
import select
import sys
import termios
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--err", required=True)
    ap.add_argument("--tty", required=True)
    ap.add_argument("--stdin", default="tty", choices=["tty", "null", "pipe"])
    ap.add_argument("--after", default="> ", help="answer once the terminal output ends with this")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--answer")
    g.add_argument("--eof", action="store_true")
    g.add_argument("--no-answer", action="store_true")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    master, slave = os.openpty()
    rpipe, wpipe = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(master)
            os.close(wpipe)
            os.setsid()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
            if a.stdin == "tty":
                os.dup2(slave, 0)
            elif a.stdin == "null":
                fd = os.open("/dev/null", os.O_RDONLY)
                os.dup2(fd, 0)
                os.close(fd)
            else:
                os.dup2(rpipe, 0)
            out = os.open(a.out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            err = os.open(a.err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(out, 1)
            os.dup2(err, 2)
            for fd in (out, err, slave, rpipe):
                if fd > 2:
                    os.close(fd)
            os.execvp(cmd[0], cmd)
        except Exception as e:  # noqa: BLE001
            os.write(2, ("pty.py: %s\n" % e).encode())
        os._exit(127)
    os.close(slave)
    os.close(rpipe)
    if a.stdin == "pipe" and a.answer is not None:
        os.write(wpipe, (a.answer + "\n").encode())
    os.close(wpipe)
    seen = b""
    status = None
    answered = a.no_answer
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        r, _, _ = select.select([master], [], [], 1.0)
        if not r:
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
                break
            continue
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break  # EIO: every slave fd is closed
        if not chunk:
            break
        seen += chunk
        if not answered and seen.endswith(a.after.encode()):
            answered = True
            os.write(master, b"\x04" if a.eof else ((a.answer or "") + "\n").encode())
    with open(a.tty, "wb") as f:
        f.write(seen.replace(b"\r\n", b"\n"))
    if status is None and time.monotonic() >= deadline:
        os.kill(pid, 9)  # the hang guard ran out: never leave the child behind
    if status is None:
        _, status = os.waitpid(pid, 0)
    os.close(master)
    sys.exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()
