"""The worker's side of its socket: its answers, sent by what was captured before any
submission code ran, and what it says to the grader in the middle of a call (a rank's
collectives, sends and receives, which the grader serves; what a recorder saw). The
grader's side of the conversation is ``grader.sandbox.listeners``.
"""

from __future__ import annotations

import _socket
import queue
import socket
import threading
from collections.abc import Sequence
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any

import torch

from grader.contract import harness
from grader.sandbox import wire
from grader.sandbox.decoding import Decoder
from grader.sandbox.encoding import Encoder


def _raise_type_error(value: Any) -> Any:
    raise TypeError(f"a {type(value).__name__} in an answer's header")


# ``json.dumps`` with wire.send's separators, through C alone: ``json`` and its encoder
# class are Python a submission could patch (``json.dumps = ...`` rewrote every answer).
_ENCODE_JSON = c_make_encoder(None, _raise_type_error, encode_basestring_ascii, None, ":", ",",
                              False, False, True)


def send_answer(sock: socket.socket, header: dict[str, Any], buffers: Sequence[memoryview] = (),
                 encode: Any = _ENCODE_JSON, join: Any = "".join, pack: Any = wire.PREFIX.pack,
                 magic: bytes = wire.MAGIC, align: int = wire.ALIGN,
                 sendmsg: Any = _socket.socket.sendmsg, sendall: Any = _socket.socket.sendall,
                 len: Any = len, bytes: Any = bytes, memoryview: Any = memoryview) -> None:
    """``wire.send`` of a request's answer (the same frame) by what was captured at import,
    before any submission ran: the C JSON encoder, the socket's C methods, the builtins.
    Rebinding ``json``, ``socket.socket`` or a builtin changes nothing here, so the
    answer says what this loop put in it (its effects above all)."""
    head = join(encode(header, 0)).encode()
    parts: list[Any] = [b""]
    size = 0
    for buf in buffers:
        pad = -size % align
        if pad:
            parts.append(bytes(pad))
            size += pad
        parts.append(buf)
        size += memoryview(buf).nbytes
    parts[0] = pack(magic, len(head), size) + head
    total = len(parts[0]) + size
    sent = sendmsg(sock, parts)
    if sent < total:  # a big payload: the rest the slow way
        sendall(sock, b"".join([bytes(p) for p in parts])[sent:])



SEND_LOCK = threading.Lock()  # every message this worker sends mid-call, from any thread

class Channel:
    """The worker's side of a conversation within one request: the rank's call asks the
    grader (a collective, a send or a receive) and waits for its answer; recorders tell it
    what they saw; the serving thread routes the grader's answers to the call."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.lock = SEND_LOCK
        # The grader's answers to one rank's asks: made by ``expect_answers`` before the
        # rank's thread starts. A plain call asks nothing, and a queue made per request was
        # a visible share of a worker's time on small calls.
        self.answers: queue.Queue[tuple[dict[str, Any], memoryview]] | None = None

    def expect_answers(self) -> None:
        self.answers = queue.Queue()

    def tell(self, header: dict[str, Any], buffers: list[memoryview] | None = None) -> None:
        with self.lock:
            wire.send(self.sock, header, buffers or [])

    def ask(self, rank: int, header: dict[str, Any], value: Any) -> Any:
        """Send ``header`` with ``value`` encoded, as ``rank``; wait for the grader's answer."""
        encoder = Encoder(strict=False)
        header = {**header, "rank": rank, "value": encoder.value(value), "objects": encoder.objects}
        self.tell(header, encoder.buffers)
        assert self.answers is not None, "a rank asks only after expect_answers"
        answer, payload = self.answers.get()
        if "error" in answer:
            raise harness.CollectiveMismatch(str(answer["error"]))
        return Decoder(answer.get("objects", []), payload, trusted=True).value(answer.get("value"))

    def route(self) -> None:
        """Hand the grader's answers to the rank's call until it says the rank is done."""
        while True:
            header, payload = wire.receive(self.sock)
            if header.get("all_done"):
                return
            assert self.answers is not None, "route only after expect_answers"
            self.answers.put((header, payload))


class RemoteCollective:
    """``all_reduce`` for a rank, served by the grader's counting fake."""

    def __init__(self, channel: Channel, collective: str):
        self.channel, self.collective = channel, collective

    def for_rank(self, rank: int) -> Any:
        def all_reduce(tensor: Any, op: Any = None, group: Any = None, async_op: bool = False) -> Any:
            if not isinstance(tensor, torch.Tensor):
                raise harness.CollectiveMismatch(f"all_reduce needs a tensor, got {type(tensor).__name__}")
            total = self.channel.ask(rank, {"collective": self.collective,
                                            "op": None if op is None else str(op)}, tensor.detach())
            tensor.copy_(total)
            return harness.DoneWork() if async_op else None

        all_reduce.rank = rank  # type: ignore[attr-defined]
        return all_reduce


class RemotePointToPoint:
    """Blocking ``send``/``recv`` for a rank, served by the grader's fake."""

    def __init__(self, channel: Channel, world: int):
        self.channel, self.world = channel, world

    def for_rank(self, rank: int) -> dict[str, Any]:
        def send(tensor: Any, dst: Any, group: Any = None, tag: int = 0) -> None:
            self.channel.ask(rank, {"p2p": "send", "peer": dst},
                             tensor.detach() if isinstance(tensor, torch.Tensor) else tensor)

        def recv(tensor: Any, src: Any = None, group: Any = None, tag: int = 0) -> Any:
            got = self.channel.ask(rank, {"p2p": "recv", "peer": src},
                                   tensor.detach() if isinstance(tensor, torch.Tensor) else tensor)
            with torch.no_grad():
                tensor.copy_(got)
            return src

        send.rank = recv.rank = rank  # type: ignore[attr-defined]
        return {"send": send, "recv": recv, "rank": rank, "world_size": self.world}


class RemoteBatchSizes:
    """A recorder the grader put on a module: each forward call's batch size goes to the
    grader as it happens (the grader keeps the record, not this worker)."""

    def __init__(self, channel: Channel, index: int):
        self.channel, self.index = channel, index

    def __call__(self, module: torch.nn.Module, args: tuple[Any, ...]) -> None:
        if harness.in_forward(module):
            self.channel.tell({"record": self.index, "size": int(args[0].shape[0])})

    # Copied with its model as the grader's own recorder is in-process: a shallow copy
    # records to the same place, a deep copy (``copy.deepcopy(model)``, pickling) to one
    # the grader never reads. Never the channel itself, which cannot be copied.
    def __copy__(self) -> RemoteBatchSizes:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return harness.unread()

    def __reduce__(self) -> str | tuple[Any, ...]:
        return harness.unread().__reduce__()
