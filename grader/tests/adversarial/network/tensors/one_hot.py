"""Attack: reach out over the network.

TCP to 1.1.1.1:80 and to the loopback (ports from /proc/net/tcp that listen,
and a few usual ones), UDP to 8.8.8.8:53, IPv6 to ::1, netlink and packet
sockets, and AF_UNIX connections to every socket path in /proc/net/unix.
Raises with what each attempt did.
"""

import socket

notes = {}


def _try(what, fn, success="CONNECTED"):
    try:
        fn()
        notes[what] = success
    except BaseException as exc:  # noqa: BLE001
        notes[what] = f"refused({type(exc).__name__})"


def _tcp(host, port, family=socket.AF_INET):
    def go():
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.settimeout(1.5)
            s.connect((host, port))
    return go


def _udp():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(1)
        s.sendto(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x01", ("8.8.8.8", 53))
        s.recvfrom(512)


def _raw(family, kind, proto=0):
    def go():
        socket.socket(family, kind, proto).close()
    return go


def _listening_ports():
    ports = set()
    try:
        with open("/proc/net/tcp") as f:
            for line in f.readlines()[1:]:
                parts = line.split()
                if parts[3] == "0A":  # LISTEN
                    ports.add(int(parts[1].split(":")[1], 16))
    except OSError:
        pass
    return sorted(ports)[:8]


def _unix_paths():
    paths = []
    try:
        with open("/proc/net/unix") as f:
            for line in f.readlines()[1:]:
                parts = line.split()
                if len(parts) >= 8 and parts[7].startswith("/"):
                    paths.append(parts[7])
    except OSError:
        pass
    return paths[:8]


def _unix(path):
    def go():
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(1)
            s.connect(path)
    return go


def one_hot(labels, num_classes=-1):
    notes.clear()
    _try("tcp-1.1.1.1:80", lambda: socket.create_connection(("1.1.1.1", 80), timeout=2).close())
    for port in sorted({22, 80, 8080, 8786, *_listening_ports()}):
        _try(f"tcp-127.0.0.1:{port}", _tcp("127.0.0.1", port))
    _try("tcp6-::1:80", _tcp("::1", 80, socket.AF_INET6))
    _try("udp-8.8.8.8:53", _udp)
    _try("socket-inet", _raw(socket.AF_INET, socket.SOCK_STREAM), "CREATED")
    _try("socket-netlink", _raw(socket.AF_NETLINK, socket.SOCK_RAW), "CREATED")
    _try("socket-packet", _raw(socket.AF_PACKET, socket.SOCK_RAW), "CREATED")
    unix = {p: "CONNECTED" for p in _unix_paths()}
    for path in list(unix):
        try:
            _unix(path)()
        except BaseException as exc:  # noqa: BLE001
            unix[path] = f"refused({type(exc).__name__})"
    summary = " ".join(f"{k}={v}" for k, v in notes.items())
    unix_summary = " ".join(f"unix:{k}={v}" for k, v in unix.items())
    raise RuntimeError(f"ATTACK network: {summary} | {unix_summary}"[:3000])
