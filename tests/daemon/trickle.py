#!/usr/bin/env python3
"""tests/daemon/trickle.py PORT N SRC SECONDS STATE [--reconnect]

Opens N connections to 127.0.0.1:PORT from the local address SRC (any
127.x.y.z: a client address of its own), each sending a request line and
then one header line a second, never ending its header. Bounded: it stops
after SECONDS (and reopens at most 4*N connections with --reconnect).
While running it writes "held=H opened=O" to STATE; at the end it prints
one line: held_max, refused (closed by the server within 1 s of opening:
refused at accept), deadline (closed later while still trickling), answered
(the server sent bytes: never expected) and open (still open at the end)."""
import os, select, socket, sys, time

port, n, src, seconds, state = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), sys.argv[5]
reconnect = "--reconnect" in sys.argv[6:]
st = {"opened": 0, "connect_failed": 0, "refused": 0, "deadline": 0, "answered": 0, "held_max": 0}
socks = {}


def open_one():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind((src, 0))
        s.settimeout(5)
        s.connect(("127.0.0.1", port))
        s.setblocking(False)
        s.send(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % port)
    except OSError:
        st["connect_failed"] += 1
        s.close()
        return
    st["opened"] += 1
    socks[s] = time.monotonic()


def closed(s, data=b""):
    life = time.monotonic() - socks.pop(s)
    if data:
        st["answered"] += 1
    elif life < 1.0:
        st["refused"] += 1
    else:
        st["deadline"] += 1
    s.close()
    if reconnect and st["opened"] < 4 * n:
        open_one()


for _ in range(n):
    open_one()
t0 = last = time.monotonic()
while time.monotonic() - t0 < seconds:
    if socks:
        r = select.select(list(socks), [], [], 0.2)[0]
    else:
        r = []
        time.sleep(0.2)
    for s in r:
        try:
            data = s.recv(4096)
        except OSError:
            data = b""
        closed(s, data)
    if time.monotonic() - last >= 1.0:
        last = time.monotonic()
        for s in list(socks):
            try:
                s.send(b"X-Trickle: a\r\n")
            except OSError:
                closed(s)
    if time.monotonic() - t0 > 1.0:
        st["held_max"] = max(st["held_max"], len(socks))
    with open(state + ".tmp", "w") as f:
        f.write("held=%d opened=%d\n" % (len(socks), st["opened"]))
    os.replace(state + ".tmp", state)
st["open"] = len(socks)
for s in socks:
    s.close()
print(" ".join("%s=%d" % kv for kv in sorted(st.items())))
