"""The grader's side of what a worker says in the middle of a request: recorders that
record here as the worker's copy of a module runs forward, and the collectives, sends
and receives of one rank of a rank run, served and counted here by the harness's fakes
(the worker's side is ``grader.sandbox.channel``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from grader.contract import harness
from grader.sandbox import wire
from grader.sandbox.decoding import Decoder
from grader.sandbox.encoding import Encoder
from grader.sandbox.handles import Listener, WorkerHandle


class Listeners(Listener):
    """Several listeners, each hearing its own messages."""

    def __init__(self, *listeners: Listener | None):
        self.listeners = [listener for listener in listeners if listener is not None]

    def hears(self, message: dict[str, Any]) -> bool:
        return any(listener.hears(message) for listener in self.listeners)

    def heard(self, message: dict[str, Any], payload: memoryview, worker: WorkerHandle) -> None:
        next(listener for listener in self.listeners if listener.hears(message)).heard(message, payload, worker)

    def close(self) -> None:
        for listener in self.listeners:
            listener.close()


class Recorders(Listener):
    """Recorders the test put on its modules (``harness.BatchSizes``) record here, in the
    grader, each time the worker's copy of the module runs forward."""

    def __init__(self, table: Sequence[Any]):
        self.table = table

    def hears(self, message: dict[str, Any]) -> bool:
        return "record" in message

    def heard(self, message: dict[str, Any], payload: memoryview, worker: WorkerHandle) -> None:
        index, size = message.get("record"), message.get("size")
        module = self.table[index] if type(index) is int and 0 <= index < len(self.table) else None
        if not isinstance(module, torch.nn.Module) or type(size) is not int or size < 0:
            raise wire.WireError("a recorder's message names no recorded module")
        for hook in module._forward_pre_hooks.values():
            if type(hook) is harness.BatchSizes:
                hook.sizes.append(size)


class RankServer(Listener):
    """The grader's side of one rank's worker in a rank run: each ``all_reduce`` (or
    ``send`` and ``recv``) arrives as a message and is served by the harness's own fake,
    so every call is made, and counted, here, for the rank whose worker sent it: a
    message that speaks for another rank breaks the contract. The worker only ever
    sees the answers.

    A message is served in the thread that waits for its rank's worker, which has
    nothing else to do meanwhile: the worker waits for the answer. The fake blocks
    until the other ranks arrive, and each rank has a thread of its own here, so
    they meet. A rank that never arrives hangs or returns; either way its own request
    ends (past the call limit, or done), the fake learns it (``close``), and the ranks
    waiting on it get an error at once. A thread per message, started and joined for
    every call, was a visible share of the rank drills' sandboxed time.
    """

    def __init__(self, fake: Any, rank: int, collective: str | None = None):
        self.fake, self.rank, self.collective = fake, rank, collective

    def hears(self, message: dict[str, Any]) -> bool:
        return "rank_done" in message or "collective" in message or "p2p" in message

    def heard(self, message: dict[str, Any], payload: memoryview, worker: WorkerHandle) -> None:
        if "rank_done" in message:
            self._own(message.get("rank_done"))
            worker.send({"all_done": True})
            return
        self._own(message.get("rank"))
        with wire.refusing_malformed("a rank's message"):
            value = Decoder(message.get("objects", []), payload).value(message.get("value"))
        self._serve(message, self.rank, value, worker)

    def _own(self, rank: Any) -> None:
        if rank != self.rank or type(rank) is not int:
            raise wire.WireError(f"rank {self.rank}'s worker spoke for rank {str(rank)[:20]}")

    def _serve(self, message: dict[str, Any], rank: int, value: Any, worker: WorkerHandle) -> None:
        encoder = Encoder(strict=False)
        try:
            answer = {"rank": rank, "value": encoder.value(self._call(message, rank, value))}
        except harness.CollectiveMismatch as exc:
            answer, encoder = {"rank": rank, "error": str(exc)}, Encoder(strict=False)
        try:
            worker.send({**answer, "objects": encoder.objects}, encoder.buffers)
        except (OSError, wire.WireError):
            pass  # the worker is gone: waiting for its answer says so

    def _call(self, message: dict[str, Any], rank: int, value: Any) -> Any:
        if "collective" in message:
            if message.get("collective") != self.collective:
                raise harness.CollectiveMismatch(f"this drill's ranks get {self.collective}, "
                                                 f"not {str(message.get('collective'))[:40]}")
            op = message.get("op")
            self.fake.for_rank(rank)(value, None if op is None else _Named(str(op)[:40]))
            return value
        kind, peer = message.get("p2p"), message.get("peer")
        calls = self.fake.for_rank(rank)
        if kind == "send":
            calls["send"](value, peer)
            return None
        if kind == "recv":
            if not isinstance(value, torch.Tensor):
                raise harness.CollectiveMismatch(f"recv needs a tensor, got {type(value).__name__}")
            calls["recv"](value, peer)
            return value
        raise harness.CollectiveMismatch(f"unknown point-to-point call {str(kind)[:40]}")

    def close(self) -> None:
        self.fake.finish(self.rank)  # this rank's request is over: ranks waiting on it learn it


class _Named:
    """An op the worker named (its ``repr``), for the fake's refusal message."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        return other is not None and str(other) == self.text

    __hash__ = object.__hash__
