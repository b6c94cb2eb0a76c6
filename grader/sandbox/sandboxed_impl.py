"""The trusted side of the trust boundary: the ``impl`` whose calls run in sandboxed workers.

``SandboxedImplementation`` is the ``impl`` the tests see under ``--isolation
process`` or ``sandbox``. It keeps every guarantee of the in-process one (same
outcomes, same counterexample records) but sends each call to a worker
(``grader.sandbox.worker``) through the submission's ``Sandbox``
(``grader.sandbox.sandboxes``) and rebuilds the answer from plain data
(``grader.sandbox.wire``). A reply is believed only as far as the grader can check it:
its printed output is capped here, its effects are sentences the grader knows, its
exception is rebuilt from builtins.

Gradients cross too: when a call's inputs require grad and its outputs do, the
outputs come back attached to a ``Bridge`` autograd node
(``grader.sandbox.autograd_bridge``) whose backward asks the worker for the gradients
through the graph it kept.
"""

from __future__ import annotations

import builtins
import os
import sys
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from grader.contract import effects, harness
from grader.contract.arguments import Layout, Targets, argument_layouts, changed_containers
from grader.contract.describe import describe
from grader.contract.forbid import FORBIDDEN, Forbidden
from grader.contract.harness import GLOO_TIMED_OUT
from grader.contract.impl import Implementation
from grader.core.files import remove_tree
from grader.core.i18n import Message
from grader.core.outcomes import BrokenContract, NotAttempted, StudentError, SubmissionError, TimedOut
from grader.sandbox import wire
from grader.sandbox.autograd_bridge import Bridge, gradient_problem
from grader.sandbox.decoding import Decoder
from grader.sandbox.encoding import Encoder
from grader.sandbox.handles import WorkerHandle, kill_workers
from grader.sandbox.listeners import Listeners, RankServer, Recorders
from grader.sandbox.sandboxes import BROKE, Sandbox
from grader.sandbox.writeback import WriteBack

GLOO_TIMEOUT_S = 60.0
MAX_REPLY_OUTPUT = 64 * 1024  # characters of printed output taken from one reply
MAX_TEST_OUTPUT = 256 * 1024  # characters echoed per test (one impl), all replies together


class SandboxedImplementation(Implementation):
    """``impl`` whose student code runs in a sandbox worker (``grader.sandbox.worker``)."""

    def __init__(self, root: Path, exercise_id: str, forbidden: Forbidden, sandbox: Sandbox,
                 mutates: Mapping[str, Collection[str]] | None = None):
        super().__init__(root, exercise_id, forbidden, mutates, guard_arguments=False)
        self.sandbox = sandbox
        self.output = _Output()

    def _send(self, function: str, header: dict[str, Any], values: dict[str, Any],
              targets: Targets | None = None, ranks: RankServer | None = None,
              layouts: list[tuple[str, Layout]] | None = None) -> tuple[Any, Decoder]:
        """Send ``header`` plus ``values`` (encoded); return the answer's value and decoder.
        ``targets``: the call's arguments; what the worker says the call changed of them
        is written into the grader's objects only as far as the function may change them.
        ``ranks``: serves one rank's collectives here, as its worker makes them (the
        request goes to that rank's worker). ``layouts``: the arguments' lists and dicts
        (``argument_layouts``), compared with those the worker sends back."""
        rank = ranks.rank if ranks is not None else None
        encoder = Encoder(strict=True)
        header = {**header, **{k: encoder.value(v) for k, v in values.items()},
                  "objects": encoder.objects}
        listener = Listeners(Recorders(encoder.table), ranks)
        if encoder.optimizers:
            self.sandbox.warm_up()
        if encoder.gpu:
            self.sandbox.check_gpu(self.exercise_id, self.forbidden.hints)
        reply, payload = self.sandbox.request(self.exercise_id, self.forbidden.hints, function,
                                              header, encoder.buffers, listener, rank,
                                              ranks.fake if ranks is not None else None)
        self.output.echo(reply)
        self.effects += _effects(reply)
        raised = "raise" in reply
        # A call's answer lists the objects it was sent first (what became of them), also
        # when the call raised (the worker sends them with the raise: what it did to them
        # before it raised is written back and told as after a return); a backward pass's
        # answer holds new gradients only.
        if raised and (header["op"] == "backward" or "objects" not in reply):
            raise _rebuild(reply["raise"], function)  # nothing of the arguments came back
        try:
            with wire.refusing_malformed():  # a forged frame is the worker's error, never the test's
                known = encoder.table if header["op"] != "backward" else []
                decoder = Decoder(reply.get("objects"), payload, known=known,
                                  write_back=WriteBack(targets or Targets(), self.allowed(function),
                                                       self.mutations))
                decoder.all_objects()
                if layouts is not None and "after" in reply:  # the lists and dicts the call left
                    self.mutations += changed_containers(layouts, _list_of(decoder.value(reply["after"])))
                if not raised:
                    graph = reply.get("graph")
                    if graph:
                        self._attach(decoder, graph, encoder.table)
                    return decoder.value(reply.get("ok")), decoder
        except wire.WireError as exc:
            self.sandbox.forget(self.exercise_id, rank)
            raise BrokenContract(Message(BROKE, {"function": function, "error": str(exc)})) from None
        raise _rebuild(reply["raise"], function)

    def _attach(self, decoder: Decoder, graph: dict[str, Any], sent: list[Any]) -> None:
        """Connect the call's outputs to its inputs through a ``Bridge`` node."""
        outputs = [decoder.obj(i) for i in graph["outputs"]]
        inputs = [sent[i] for i in graph["inputs"]]
        if not all(isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex())
                   for t in outputs):
            raise wire.WireError("a non-float output claims to need gradients")
        if not all(isinstance(t, torch.Tensor) for t in inputs):
            raise wire.WireError("a graph's input is no tensor argument")

        def backward(grads: Sequence[torch.Tensor]) -> list[torch.Tensor | None]:
            got, _ = self._send("backward", {"op": "backward", "graph": graph["id"]},
                                {"grads": list(grads)})
            problem = gradient_problem(got, inputs)
            if problem:  # raised inside autograd: as the worker's broken contract, never the test's
                self.sandbox.forget(self.exercise_id)
                raise BrokenContract(Message("the backward pass through {drill}: its answer broke the grading "
                                             "contract: {error}", {"drill": self.exercise_id, "error": problem}))
            return got

        bridged = Bridge.apply(backward, tuple(o.detach() for o in outputs), *inputs)
        for i, tensor in zip(graph["outputs"], bridged):
            decoder.objects[i] = tensor

    def invoke(self, name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        value, _ = self._send(name, {"op": "call", "name": name},
                              {"args": list(args), "kwargs": dict(kwargs)}, Targets.of(args, kwargs),
                              layouts=argument_layouts(args, kwargs))
        return value

    def threaded_ranks(self, name: str, rank_args: Sequence[Sequence[Any]], collective: str,
                        records: Sequence[dict[str, Any] | None]) -> harness.RankRun:
        """Every rank in a worker of its own; their ``all_reduce`` calls are served and
        counted here, per worker."""
        fake = harness.CountingAllReduce(len(rank_args))
        results = self._rank_run(name, {"collective": collective}, rank_args, fake)
        _record_results(records, results)
        return harness.RankRun(results, list(fake.calls))

    def threaded_p2p_ranks(self, name: str, rank_args: Sequence[Sequence[Any]],
                            records: Sequence[dict[str, Any] | None]) -> harness.P2PRun:
        """Every rank in a worker of its own; every send and recv is served and logged here."""
        fake = harness.PointToPoint(len(rank_args))
        results = self._rank_run(name, {}, rank_args, fake)
        _record_results(records, results)
        return harness.P2PRun(results, [list(s) for s in fake.sent])

    def _rank_run(self, name: str, header: dict[str, Any], rank_args: Sequence[Sequence[Any]],
                  fake: Any) -> list[Any]:
        """Call ``name`` on every rank at once, each in its own worker (the ranks of one
        process could share memory, which real ranks cannot), from one thread per rank
        here (``harness.rank_threads``: a rank that ends is finished in the fake, so ranks
        waiting on it learn it; the most telling rank's error is raised)."""
        world, collective = len(rank_args), header.get("collective")

        def call(*args: Any, rank: int) -> Any:
            value, _ = self._send(name, {**header, "op": "rank", "name": name, "rank": rank,
                                         "world": world},
                                  {"args": list(args)}, Targets.of(args, {}, rank=rank),
                                  RankServer(fake, rank, collective), argument_layouts(args, {}, rank=rank))
            return value

        return harness.rank_threads(call, rank_args, lambda rank: {"rank": rank}, fake.finish)

    def run_gloo(self, name: str, rank_args: Sequence[Sequence[Any]], p2p: bool = False) -> list[Any]:
        """Every rank is its own worker, forked from the zygote like the others."""
        world = len(rank_args)
        rendezvous = self.sandbox.private(f"gloo-{os.getpid()}-{id(rank_args)}")
        ranks: list[WorkerHandle] = []
        try:
            for _ in range(world):
                ranks.append(self.sandbox.new_worker(self.exercise_id, self.forbidden.hints,
                                                     role="rank", shared=rendezvous))
            encoders = []
            for rank, worker in enumerate(ranks):
                encoder = Encoder(strict=True)
                header = {"op": "gloo", "name": name, "rank": rank, "world": world, "p2p": p2p,
                          "init_file": str(rendezvous / "store"),
                          "args": encoder.value(list(rank_args[rank])), "objects": encoder.objects}
                worker.sock.settimeout(GLOO_TIMEOUT_S)
                wire.send(worker.sock, header, encoder.buffers)
                encoders.append(encoder)
            results = []
            for rank, worker in enumerate(ranks):
                try:
                    reply, payload = wire.receive(worker.sock)
                except TimeoutError:
                    raise TimedOut(Message(GLOO_TIMED_OUT, {"function": name, "world": world,
                                                            "seconds": GLOO_TIMEOUT_S})) from None
                except (EOFError, ConnectionError):
                    raise StudentError(f"{name}() on gloo rank {rank}", SystemExit(
                        "the rank's process ended during the call"), "") from None
                self.output.echo(reply)
                if "raise" in reply:
                    raise _rebuild(reply["raise"], f"{name}() on gloo rank {rank}")
                try:
                    with wire.refusing_malformed():
                        results.append(Decoder(reply.get("objects"), payload).value(reply.get("ok")))
                except wire.WireError as exc:
                    raise BrokenContract(Message("{function}() on gloo rank {rank}: its answer broke the grading "
                                                 "contract: {error}", {"function": name, "rank": rank,
                                                                       "error": str(exc)})) from None
            return results
        finally:
            kill_workers(ranks)
            if not self.sandbox.plan.on("bwrap"):
                remove_tree(rendezvous)



def _record_results(records: Sequence[dict[str, Any] | None], results: Sequence[Any]) -> None:
    for record, result in zip(records, results):
        if record is not None:
            record["result"] = describe(result)


def _effects(reply: dict[str, Any]) -> list[str]:
    """What the worker says its call changed of the global state (only sentences
    ``grader.contract.effects`` can produce: the worker cannot write the message)."""
    said = reply.get("effects")
    return [s for s in said if isinstance(s, str) and s in effects.SENTENCES] if isinstance(said, list) else []


class _Output:
    """What a test's calls printed, echoed into its captured output within bounds the
    grader keeps: the worker caps what it sends (64 KiB per request), but a worker is
    not believed, so each reply's text is cut here too, and a test echoes at most
    ``MAX_TEST_OUTPUT`` characters in all (an answer of 16 MiB of "stdout" per call
    once took the grader to 16 GB)."""

    def __init__(self) -> None:
        self.left = MAX_TEST_OUTPUT

    def echo(self, reply: dict[str, Any]) -> None:
        for stream, text in ((sys.stdout, reply.get("stdout")), (sys.stderr, reply.get("stderr"))):
            if not isinstance(text, str) or not text or self.left <= 0:
                continue
            text = text[:min(MAX_REPLY_OUTPUT, self.left)]
            self.left -= len(text)
            stream.write(text)
            if self.left <= 0:
                stream.write(f"\n... (more output not kept: {MAX_TEST_OUTPUT} characters per test)\n")


_NOT_REBUILT = (KeyboardInterrupt, GeneratorExit)


def _kept(said: Any, message: str) -> Message | None:
    """The message id a worker sent with ``message``, where it says exactly ``message``
    in English, or its first lines (a traceback may follow them: ``_Outcome.more``); the
    text is the worker's word either way, the id may only repeat it."""
    kept = Message.from_json(said)  # checked: plain placeholders, bounded parameters
    english = str(kept) if kept is not None else None
    return kept if english is not None and (message == english or message.startswith(english + "\n")) else None


def _rebuild(info: Any, function: str) -> BaseException:
    """The outcome exception a worker described, made here from builtins only."""
    if not isinstance(info, dict):
        return BrokenContract(Message("{function}(): the worker's answer was malformed", {"function": function}))
    kind, message = info.get("kind"), str(info.get("message", ""))[:4000]
    if kind == "wire":
        return BrokenContract(Message(BROKE, {"function": function, "error": message}))
    if kind in ("not_attempted", "submission_error"):
        outcome = NotAttempted if kind == "not_attempted" else SubmissionError
        kept = _kept(info.get("worded"), message)
        return outcome(message) if kept is None else outcome(kept, more=message[len(str(kept)) + 1:])
    if kind == "assertion":
        kept = _kept(info.get("worded"), message)  # a forbidden use's words, the one id a worker may send here
        failure = AssertionError(message)
        failure.worded = kept if kept is not None and kept.id == FORBIDDEN and str(kept) == message else None  # type: ignore[attr-defined]
        return failure
    listed = info.get("types")
    names = listed if isinstance(listed, list) else []
    original: BaseException = RuntimeError(f"{names[0] if names else 'error'}: {message}")
    for name in names:
        cls = harness.CollectiveMismatch if name == "CollectiveMismatch" else getattr(builtins, str(name), None)
        if isinstance(cls, type) and issubclass(cls, BaseException) and not issubclass(cls, _NOT_REBUILT):
            try:
                original = cls(message)
                break
            except Exception:  # noqa: BLE001 - e.g. UnicodeDecodeError needs five arguments
                continue
    function_text = str(info.get("function") or f"{function}()")[:200]
    return StudentError(function_text, original, str(info.get("traceback", ""))[:8000])


def _list_of(value: Any) -> list[Any]:
    """The arguments a worker sent back (a tuple), or its broken contract."""
    if type(value) is not tuple:
        raise wire.WireError("the arguments came back as something else than a tuple")
    return list(value)
