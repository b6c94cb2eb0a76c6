"""The grader's handle on one sandbox worker process: send it a request, serve what it
says meanwhile (a ``Listener``), wait for its answer within the call's limit, kill it.

A worker is forked by this process's zygote (``grader.sandbox.zygote``) and killed
through it: ``kill_workers`` asks once per zygote, so many workers' exits overlap.
"""

from __future__ import annotations

import math
import socket
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from grader.core.files import remove_tree
from grader.sandbox import wire
from grader.sandbox.pinning import staying_on_this_cpu
from grader.sandbox.zygote import SandboxError, Zygote


class WorkerDied(Exception):
    """The worker's socket closed during a request: it exited, or was killed."""


class Listener:
    """What the grader does with the messages a worker sends in the middle of a request."""

    def hears(self, message: dict[str, Any]) -> bool:
        """Whether ``message`` is one of this listener's (else it is the answer)."""
        return False

    def heard(self, message: dict[str, Any], payload: memoryview, worker: WorkerHandle) -> None:
        """Serve ``message`` (answering through ``worker.send`` if it asks)."""

    def close(self) -> None:
        """The request is over, however it ended."""


class WorkerHandle:
    """One worker process, forked by ``zygote`` for this grader, and the socket it serves."""

    def __init__(self, zygote: Zygote, sock: socket.socket, pid: int, tmp: Path):
        self.zygote, self.sock, self.pid, self.tmp = zygote, sock, pid, tmp
        self.generation = zygote.generation
        self._alive = True
        self.gpu = ""  # a worker forked to try the GPU: why it could not use it ("" if it could)

    def send(self, header: dict[str, Any], buffers: Sequence[memoryview] = ()) -> None:
        wire.send(self.sock, header, buffers)

    @property
    def alive(self) -> bool:
        """False once killed, or once the zygote that forked it was restarted."""
        return self._alive and self.generation == self.zygote.generation

    def exchange(self, header: dict[str, Any], buffers: Sequence[memoryview], timeout: float,
                 listener: Listener | None = None) -> tuple[dict[str, Any], memoryview]:
        """Send a request; serve what the worker says meanwhile; return its answer. The
        whole exchange is within ``timeout`` (``TimeoutError`` past it; 0: no limit)."""
        deadline = time.monotonic() + timeout if timeout else math.inf
        with staying_on_this_cpu() as cpu:
            header["cpu"] = cpu  # the worker moves there: see ``grader.sandbox.pinning.follow_cpu``
            try:
                self.sock.settimeout(timeout or None)  # 0 would make the socket non-blocking
                self.send(header, buffers)
                while True:
                    message, payload = wire.receive(self.sock)
                    if listener is None or not listener.hears(message):
                        return message, payload
                    listener.heard(message, payload, self)
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise TimeoutError("the worker kept talking past the call's limit")
                    self.sock.settimeout(None if left == math.inf else left)
            except (EOFError, ConnectionError, BrokenPipeError):
                raise WorkerDied() from None
            finally:
                if listener is not None:
                    listener.close()

    def kill(self) -> None:
        kill_workers([self])


def kill_workers(workers: Sequence[WorkerHandle]) -> None:
    """Kill ``workers`` with one request per zygote: each is killed before any is
    waited for, so their exits overlap (one request at a time, closing a sandbox of
    many workers waits for their exits one after another)."""
    alive = [w for w in workers if w._alive]
    for worker in alive:
        worker._alive = False
    by_zygote: dict[int, list[WorkerHandle]] = {}
    for worker in alive:
        if worker.generation == worker.zygote.generation:  # else it died with its zygote
            by_zygote.setdefault(id(worker.zygote), []).append(worker)
    for group in by_zygote.values():
        try:
            group[0].zygote.exchange({"op": "kill", "pids": [w.pid for w in group]})
        except SandboxError:
            pass
    for worker in alive:
        worker.sock.close()
        remove_tree(worker.tmp)
