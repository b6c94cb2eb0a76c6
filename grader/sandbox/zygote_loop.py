"""The zygote's own loop, in the zygote's interpreter: fork a worker per request.

``python -I -c <launch's boot>`` runs this module's ``main`` (``grader.sandbox.zygote``
starts it, through ``grader.sandbox.launch``, in a scrubbed environment, inside
bubblewrap where available). The zygote imports torch and the confinement libraries
once, then waits on its control socket (fd 0). It never holds the reference or the
tests and never runs student code. For each ``fork`` request it forks a *worker*
(``grader.sandbox.worker``'s ``serve``) in a new session; it also kills the workers a
connection asked for, wipes a submission's scratch folder, reports its workers' CPU
time and warms up.
"""

from __future__ import annotations

import gc
import hmac
import importlib
import json
import os
import selectors
import signal
import socket
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from grader.core import files
from grader.sandbox import armor, clock, confine, lockdown
from grader.sandbox.worker import serve
from grader.sandbox.zygote import key_digest

# Imported by a warm zygote, once, though torch would import them lazily: otherwise every
# worker that needs them pays them again (torch._dynamo with sympy's symbolic shapes,
# the dearest, when a worker builds its first optimizer: the GAN's, grad_accum's).
WARM_IMPORTS = ("torch.fx.experimental.symbolic_shapes", "torch._dynamo", "torch.distributed")


class _Client:
    """One connection that asks this zygote for workers: the owner's control socket, or
    a grading process that shares the zygote (``share``). Each kills only its own."""

    def __init__(self, sock: socket.socket, known: bool):
        self.sock = sock
        self.known = known  # the owner is; a sharer once it has shown the key
        self.children: set[int] = set()
        self.cpu_done = 0.0  # CPU seconds of its workers that have ended (the kernel's rusage)
        self.delay_done = 0.0  # run-queue delay of their main threads, read before they were reaped

    def usage(self) -> dict[str, float | None]:
        """The CPU time its workers used and the run-queue delay of their main threads,
        ended workers and running ones, as the kernel counts them (what a drill budget
        charges: ``grader.sandbox.clock``); the delay is None where the kernel keeps none."""
        delays = [clock.thread_delay(pid) for pid in self.children]
        delay = None if not clock.AVAILABLE or None in delays else \
            self.delay_done + sum(d for d in delays if d is not None)
        return {"cpu": self.cpu_done + sum(_cpu_of(pid) for pid in self.children), "delay": delay}

    def ended(self, pid: int, usage: Any, delay: float) -> None:
        self.children.discard(pid)
        self.delay_done += delay
        if usage is not None:
            self.cpu_done += usage.ru_utime + usage.ru_stime


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_of(pid: int) -> float:
    """User plus system CPU seconds of the running process ``pid`` (all its threads)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rpartition(b")")[2].split()
        return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime (fields 14, 15)
    except (OSError, IndexError, ValueError):
        return 0.0


def zygote(control: socket.socket, warm: bool) -> None:
    """Fork one worker per request until the owner closes the control socket (fd 0)
    (``warm``: import ``WARM_IMPORTS`` first, as a later ``warm`` request does).

    The owner may ``share`` the zygote: it hands over a listening socket, bound where
    only the grader's own processes can reach it, and the digest of a key; a grading
    process that connects there and shows the key is served like the owner (pytest-xdist's
    workers, sharing their controller's zygote). Only the digest is kept here, as the
    workers forked from this process could read anything in its memory.
    """
    sealed = lockdown.seal_scratch()  # first: the zygote holds CAP_SYS_ADMIN for this alone
    if sealed is not None:
        print(f"zygote: {sealed}", file=sys.stderr, flush=True)  # each worker reports it too
    if warm:
        _warm_up()
    lockdown.preload()
    armor.preload()
    gc.freeze()  # what the zygote made stays shared with its workers, never copied
    owner = _Client(control, known=True)
    clients = [owner]
    listener: socket.socket | None = None
    digest = ""
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ, owner)
    while owner.sock.fileno() >= 0:
        for ready, _ in selector.select():
            client = ready.data
            if client is None:  # the listener: a grading process that shares this zygote
                assert listener is not None
                _accept(listener, clients, selector)
                continue
            if client.sock.fileno() < 0:  # dropped earlier in this round
                continue
            request, fds = _read(client)
            if request is None or not (client.known or _shows_key(request, digest)):
                for fd in fds:
                    os.close(fd)
                _drop(client, clients, selector)
                continue
            answer = {"hello": True}
            if not client.known:
                client.known = True
            elif request.get("op") == "share":
                shares = client is owner and listener is None and bool(fds)
                if shares:
                    listener = socket.socket(fileno=fds.pop(0))
                    digest = str(request.get("key", ""))
                    selector.register(listener, selectors.EVENT_READ, None)
                for fd in fds:
                    os.close(fd)
                answer = {"shared": shares}
            else:
                _reap(clients)
                answer = _handle(request, fds, client, clients, listener, selector)
            try:
                client.sock.sendall(json.dumps(answer).encode())
            except OSError:  # that grading process is gone: so are its workers
                _drop(client, clients, selector)
    for client in clients:
        for pid in client.children:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
    # No interpreter teardown: torch's finalizers (unregistering its operator libraries)
    # are slow, and the grader waits for this exit at the end of every grading.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _handle(request: dict[str, Any], fds: list[int], client: _Client, clients: list[_Client],
            listener: socket.socket | None, selector: selectors.BaseSelector) -> dict[str, Any]:
    """Serve one request of a known client (a share is the loop's); its answer."""
    op = request.get("op")
    if op == "fork":
        request["zygote"] = os.getpid()
        pid = os.fork()
        if pid == 0:  # the worker: none of the zygote's connections go with it
            selector.close()
            for other in clients:
                other.sock.close()
            if listener is not None:
                listener.close()
            os.setsid()
            code = 0
            try:
                serve(socket.socket(fileno=fds[0]), request)
            except BaseException:  # noqa: BLE001 - a worker never returns into the zygote loop
                code = 70
            os._exit(code)
        for fd in fds:
            os.close(fd)
        client.children.add(pid)
        return {"pid": pid}
    for fd in fds:  # only a fork hands over a socket
        os.close(fd)
    if op == "kill":
        _kill([pid for pid in map(int, request["pids"]) if pid in client.children], client)
        return {"killed": True}
    if op == "wipe":
        _wipe(str(request.get("path", "")), request.get("uid"))
        return {"wiped": True}
    if op == "usage":
        return client.usage()
    if op == "warm":
        _warm_up()
        gc.freeze()
        return {"warm": True}
    return {"unknown": op}


def _accept(listener: socket.socket, clients: list[_Client], selector: selectors.BaseSelector) -> None:
    """A new connection: a stranger until it shows the key."""
    try:
        sock, _ = listener.accept()
    except OSError:  # out of descriptors, say: no more sharers (they start zygotes of their own)
        selector.unregister(listener)
        listener.close()
        return
    sock.setblocking(True)
    stranger = _Client(sock, known=False)
    clients.append(stranger)
    selector.register(sock, selectors.EVENT_READ, stranger)


def _read(client: _Client) -> tuple[dict[str, Any] | None, list[int]]:
    """One request (None: the connection closed, or what came is not a request) and
    the descriptors it carried."""
    try:
        message, fds, _, _ = socket.recv_fds(client.sock, 1 << 20, 4)
    except OSError:
        return None, []
    try:
        request = json.loads(message) if message else None
    except ValueError:
        request = None
    return (request if isinstance(request, dict) else None), fds


def _shows_key(request: dict[str, Any], digest: str) -> bool:
    """A sharer's first message: ``{"op": "hello", "key": ...}`` with the right key."""
    key = request.get("key")
    return (bool(digest) and request.get("op") == "hello" and isinstance(key, str)
            and hmac.compare_digest(key_digest(key), digest))


def _drop(client: _Client, clients: list[_Client], selector: selectors.BaseSelector) -> None:
    """A connection closed (or a stranger): its workers die with it. The owner's closing
    ends the zygote (the loop sees its socket closed)."""
    _kill(list(client.children), client)
    selector.unregister(client.sock)
    clients.remove(client)
    client.sock.close()


def _kill(pids: list[int], client: _Client) -> None:
    """Kill ``pids`` (``client``'s workers) all first, then wait: their exits overlap."""
    killed = []
    for pid in pids:
        try:
            os.killpg(pid, signal.SIGKILL)
            killed.append(pid)
        except OSError as exc:  # gone already; or not ours to kill: say so, go on
            print(f"zygote: cannot kill worker {pid}: {exc}", file=sys.stderr, flush=True)
    for pid in killed:
        _collect(pid, client, block=True)


def _warm_up() -> None:
    for name in WARM_IMPORTS:
        importlib.import_module(name)


def _reap(clients: Iterable[_Client]) -> None:
    for client in clients:
        for pid in list(client.children):
            _collect(pid, client, block=False)


def _collect(pid: int, client: _Client, block: bool) -> None:
    """Reap worker ``pid`` once it has ended (``block``: wait for that), booking its CPU
    time and run-queue delay to ``client``: the delay is read while it is still a zombie,
    since no rusage carries it."""
    try:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT | (0 if block else os.WNOHANG)) is None:
            return  # still running
        delay = clock.thread_delay(pid) or 0.0
        _, _, usage = os.wait4(pid, 0)
    except ChildProcessError:  # reaped already
        client.ended(pid, None, 0.0)
        return
    except OSError:
        return
    client.ended(pid, usage, delay)


def _wipe(path: str, uid: Any) -> None:
    """Remove a submission's folder from the scratch tmpfs, as the uid its workers ran as
    (the zygote cannot write in their folders), in a child that ends with it."""
    if not Path(path).is_relative_to(confine.SCRATCH) or ".." in Path(path).parts:
        return
    pid = os.fork()
    if pid == 0:
        try:
            if type(uid) is int:
                os.setgroups([])
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
            files.remove_tree(path)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    files.remove_tree(path)  # what is left is the zygote's own (the folder itself)


def main() -> None:
    control = socket.socket(fileno=0)
    zygote(control, warm="warm" in sys.argv[1:])


if __name__ == "__main__":
    main()
