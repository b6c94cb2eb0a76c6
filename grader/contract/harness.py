"""Run a distributed drill's function on several ranks at once.

``threaded_ranks``: every rank is a thread of this process and the collective is a
counting in-memory ``all_reduce`` (SUM, in place), so a property test can run
hundreds of multi-rank cases a second and count calls. A rank that makes a
different number of collective calls from the others gets a clear error instead
of a deadlock.

``threaded_p2p_ranks``: the same for point-to-point drills (a ring all-reduce):
each rank gets a blocking ``send(tensor, dst)`` / ``recv(tensor, src)`` pair with
gloo's semantics (a send returns only once the matching recv has taken it), plus
its ``rank`` and ``world_size``; every message is logged, and a deadlock or an
unmatched send/recv is a clear error instead of a hang.

``gloo_ranks``: the real thing. Every rank is a process forked from a forkserver
that imported torch and nothing else (never a fork of the grader), joined with
``torch.distributed`` over gloo through a ``file://`` rendezvous; tensors come
back as plain lists.

Why one module of about 470 lines: the three ways of running ranks are one
contract (the same ``RankRun`` and ``P2PRun`` answers, the same
``CollectiveMismatch`` and error rules, the same tensors-as-plain-data), which
the in-process ``impl`` and the sandbox both address as ``harness``; the
forkserver that starts gloo ranks preloads this module by name, so the code a
rank process runs lives here too.
"""

from __future__ import annotations

import functools
import multiprocessing
import queue as queue_module
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch

# At the top, not in a rank: a sandbox worker imports no grader module once a submission may run.
from grader.contract.call import guarded_call
from grader.core.i18n import N_, Message
from grader.core.outcomes import NotAttempted, StudentError, SubmissionError, TimedOut

RENDEZVOUS_TIMEOUT_S = 60.0
GLOO_TIMED_OUT = N_("{function}() on {world} gloo ranks did not finish in {seconds:.0f} s")


class CollectiveMismatch(RuntimeError):
    """The ranks did not make matching collective calls."""


class BatchSizes:
    """A forward pre-hook that records the batch size of every forward call.

    ``model.register_forward_pre_hook(seen := BatchSizes())``, call the student's
    function, read ``seen.sizes``. Unlike a lambda it crosses the sandbox boundary
    (``grader.sandbox.wire`` carries it as its list of sizes, and brings the list back), so
    a property about *how* a model was called works in every isolation mode.
    """

    def __init__(self, sizes: list[int] | None = None):
        self.sizes: list[int] = list(sizes or [])

    def __call__(self, module: torch.nn.Module, args: tuple[Any, ...]) -> None:
        if in_forward(module):
            self.sizes.append(int(args[0].shape[0]))


# the code that calls a module's forward pre-hooks: _call_impl's nested ``inner`` (torch 2.x),
# else _call_impl itself
_FORWARD = next((c for c in torch.nn.Module._call_impl.__code__.co_consts if getattr(c, "co_name", None) == "inner"),
                torch.nn.Module._call_impl.__code__)


def in_forward(module: torch.nn.Module) -> bool:
    """Whether the hook asking was called by ``module``'s own forward call, which runs its
    pre-hooks (``nn.Module._call_impl``): a recorder called by hand, with the model and a
    batch it was never run on, records nothing."""
    caller = sys._getframe(2)  # in_forward <- the hook's __call__ <- its caller
    return caller.f_code is _FORWARD and caller.f_locals.get("self") is module


def unread() -> Callable[[torch.nn.Module, tuple[Any, ...]], None]:
    """A forward pre-hook that records where no one reads, made of the standard library
    alone: what a copy of a model carrying a recorder carries (a sandbox worker's pickle
    cannot import the grader's modules)."""
    return functools.partial(dict.__setitem__, {})


@dataclass
class RankRun:
    results: list[Any]  # what each rank's call returned
    calls: list[int]  # how many collective calls each rank made


class CountingAllReduce:
    """An in-memory ``all_reduce`` for ranks that are threads."""

    def __init__(self, world_size: int):
        self.world_size = world_size
        self.calls = [0] * world_size
        self.done = [False] * world_size
        self._cond = threading.Condition()
        self._rounds: dict[int, dict[int, torch.Tensor]] = {}
        self._totals: dict[int, torch.Tensor] = {}

    def for_rank(self, rank: int) -> Callable[..., Any]:
        def all_reduce(tensor, op=None, group=None, async_op=False):
            self._all_reduce(rank, tensor, op)
            return DoneWork() if async_op else None
        all_reduce.__dict__["rank"] = rank  # lets the caller tell which rank a call belongs to
        return all_reduce

    def _all_reduce(self, rank: int, tensor: torch.Tensor, op: Any) -> None:
        if op is not None and op != torch.distributed.ReduceOp.SUM:
            raise CollectiveMismatch(f"all_reduce: this drill reduces with SUM, not {op}")
        if not isinstance(tensor, torch.Tensor):
            raise CollectiveMismatch(f"all_reduce needs a tensor, got {type(tensor).__name__}")
        with self._cond:
            k = self.calls[rank]
            self.calls[rank] += 1
            self._rounds.setdefault(k, {})[rank] = tensor.detach().clone()
            self._cond.notify_all()
            while len(self._rounds[k]) < self.world_size:
                quitters = [r for r in range(self.world_size) if self.done[r] and self.calls[r] <= k]
                if quitters:
                    raise CollectiveMismatch(
                        f"rank {rank} made all_reduce call #{k + 1}, but rank {quitters[0]} "
                        f"returned after {self.calls[quitters[0]]} call(s): every rank must make "
                        "the same collective calls")
                if not self._cond.wait(timeout=RENDEZVOUS_TIMEOUT_S):
                    raise CollectiveMismatch("all_reduce: the other ranks never arrived")
            if k not in self._totals:
                self._totals[k] = self._sum(k)
            total = self._totals[k]
        tensor.copy_(total)

    def _sum(self, k: int) -> torch.Tensor:
        parts = [self._rounds[k][r] for r in range(self.world_size)]
        for r, p in enumerate(parts):
            if p.shape != parts[0].shape or p.dtype != parts[0].dtype:
                raise CollectiveMismatch(
                    f"all_reduce call #{k + 1}: rank 0 sent {parts[0].dtype} {tuple(parts[0].shape)} "
                    f"but rank {r} sent {p.dtype} {tuple(p.shape)}")
        total = parts[0].clone()
        for p in parts[1:]:
            total += p
        return total

    def finish(self, rank: int) -> None:
        with self._cond:
            self.done[rank] = True
            self._cond.notify_all()


class DoneWork:
    def wait(self, timeout: timedelta | None = None) -> bool:
        return True

    def is_completed(self) -> bool:
        return True


def threaded_ranks(call: Callable[..., Any], rank_args: Sequence[Sequence[Any]],
                   collective: str = "all_reduce") -> RankRun:
    """``call(*rank_args[r], **{collective: fake})`` on every rank r, as threads."""
    fake = CountingAllReduce(len(rank_args))
    results = rank_threads(call, rank_args, lambda rank: {collective: fake.for_rank(rank)},
                            fake.finish)
    return RankRun(results, fake.calls)


def rank_threads(call: Callable[..., Any], rank_args: Sequence[Sequence[Any]],
                  rank_kwargs: Callable[[int], dict[str, Any]],
                  finish: Callable[[int], None]) -> list[Any]:
    """``call(*rank_args[r], **rank_kwargs(r))`` on every rank r at once, one thread
    each; ``finish(r)`` tells the fake when rank r is gone (so waiting ranks learn it).
    Returns the per-rank results, or raises the most telling rank error."""
    world = len(rank_args)
    results: list[Any] = [None] * world
    errors: list[BaseException | None] = [None] * world

    def run(rank: int) -> None:
        try:
            results[rank] = call(*rank_args[rank], **rank_kwargs(rank))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the grader's thread
            errors[rank] = exc
        finally:
            finish(rank)

    threads = [threading.Thread(target=run, args=(r,), name=f"rank-{r}", daemon=True)
               for r in range(world)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _raise_first(errors)
    return results


def _raise_first(errors: Sequence[BaseException | None]) -> None:
    """Re-raise the most telling rank error: the cause, not the ranks it stranded."""
    real = [e for e in errors if e is not None]
    for kind in (NotAttempted, TimedOut, SubmissionError):
        for e in real:
            if isinstance(e, kind):
                raise e
    causes = [e for e in real if not (isinstance(e, StudentError)
                                      and isinstance(e.original, CollectiveMismatch))]
    if causes or real:
        raise (causes or real)[0]


# ---------------------------------------------------------------- point-to-point ranks

@dataclass
class P2PRun:
    results: list[Any]  # what each rank's call returned
    sent: list[list[tuple[int, int]]]  # per rank, its sends in order: (dst, numel)


@dataclass
class _Message:
    data: torch.Tensor
    taken: bool = False


class PointToPoint:
    """Blocking ``send``/``recv`` between ranks that are threads, as gloo does them.

    ``send`` returns only once the receiver's matching ``recv`` has taken the message
    (on gloo, a ring where every rank sends first hangs even for 10 floats),
    so a schedule that deadlocks on gloo deadlocks here too; here it is detected, the
    moment every rank still running waits for a partner that cannot come, and each
    waiting rank raises ``CollectiveMismatch`` describing who waits for whom.
    """

    def __init__(self, world_size: int):
        self.world_size = world_size
        self.sent: list[list[tuple[int, int]]] = [[] for _ in range(world_size)]
        self.done = [False] * world_size
        self._waiting: list[tuple[str, int] | None] = [None] * world_size
        self._mailbox: dict[tuple[int, int], _Message] = {}
        self._failure: str | None = None
        self._cond = threading.Condition()

    def for_rank(self, rank: int) -> dict[str, Any]:
        """The keyword arguments a rank's call gets: send, recv, rank, world_size."""
        def send(tensor, dst, group=None, tag=0):
            self._send(rank, tensor, dst)

        def recv(tensor, src=None, group=None, tag=0):
            self._recv(rank, tensor, src)
            return src

        send.__dict__["rank"] = recv.__dict__["rank"] = rank  # lets the caller tell which rank a call belongs to
        return {"send": send, "recv": recv, "rank": rank, "world_size": self.world_size}

    def _check_peer(self, rank: int, what: str, tensor: Any, peer: Any) -> None:
        if not isinstance(tensor, torch.Tensor):
            raise CollectiveMismatch(f"{what} needs a tensor, got {type(tensor).__name__}")
        if not tensor.is_contiguous():
            raise CollectiveMismatch(f"{what}: the tensor has to be contiguous (gloo refuses "
                                     f"strided views; shape {tuple(tensor.shape)}, "
                                     f"stride {tensor.stride()})")
        if not isinstance(peer, int) or isinstance(peer, bool) or not 0 <= peer < self.world_size:
            raise CollectiveMismatch(f"{what}: rank {peer!r} does not exist "
                                     f"(world_size {self.world_size})")
        if peer == rank:
            raise CollectiveMismatch(f"{what} on rank {rank}: a rank cannot send to or "
                                     "receive from itself")

    def _send(self, rank: int, tensor: torch.Tensor, dst: int) -> None:
        self._check_peer(rank, f"send(to {dst})", tensor, dst)
        with self._cond:
            if (rank, dst) in self._mailbox:  # impossible for one thread; kept as a guard
                raise CollectiveMismatch(f"rank {rank} sent twice to rank {dst} at once")
            message = _Message(tensor.detach().clone())
            self._mailbox[(rank, dst)] = message
            self.sent[rank].append((dst, tensor.numel()))
            self._cond.notify_all()
            self._wait(rank, ("send", dst), lambda: message.taken)

    def _recv(self, rank: int, tensor: torch.Tensor, src: Any) -> None:
        if src is None:
            raise CollectiveMismatch("recv: name the rank you receive from (src=...)")
        self._check_peer(rank, f"recv(from {src})", tensor, src)
        with self._cond:
            self._wait(rank, ("recv", src), lambda: (src, rank) in self._mailbox)
            message = self._mailbox.pop((src, rank))
            message.taken = True
            self._cond.notify_all()
        data = message.data
        if data.dtype != tensor.dtype or data.numel() != tensor.numel():
            raise CollectiveMismatch(
                f"rank {rank} received into a {tensor.dtype} tensor of {tensor.numel()} "
                f"element(s) from rank {src}, which sent a {data.dtype} tensor of "
                f"{data.numel()}: the recv buffer must match what is sent")
        with torch.no_grad():
            tensor.copy_(data.reshape(tensor.shape))

    def _wait(self, rank: int, state: tuple[str, int], ready: Callable[[], bool]) -> None:
        """Wait (holding the lock) until ``ready()``, or raise on a deadlock."""
        self._waiting[rank] = state
        try:
            while not ready():
                if self._failure is None:
                    self._failure = self._deadlock()
                if self._failure is not None:
                    self._cond.notify_all()
                    raise CollectiveMismatch(self._failure)
                if not self._cond.wait(timeout=RENDEZVOUS_TIMEOUT_S):
                    raise CollectiveMismatch(f"rank {rank} waited {RENDEZVOUS_TIMEOUT_S:.0f} s "
                                             f"in {state[0]} for rank {state[1]}")
        finally:
            self._waiting[rank] = None

    def _stuck(self, rank: int) -> bool:
        state = self._waiting[rank]
        if state is None:
            return self.done[rank]
        kind, peer = state
        if kind == "send":
            message = self._mailbox.get((rank, peer))
            return message is not None and not message.taken
        return (peer, rank) not in self._mailbox

    def _deadlock(self) -> str | None:
        """Why no rank can move any more, or None while one still can."""
        if not all(self._stuck(r) for r in range(self.world_size)):
            return None
        waits, quitters = [], []
        for r, state in enumerate(self._waiting):
            if state is None:
                continue
            kind, peer = state
            waits.append(f"rank {r} waits in {kind}({'to' if kind == 'send' else 'from'} {peer})")
            if self.done[peer]:
                quitters.append(f"rank {peer} returned without the matching "
                                f"{'recv' if kind == 'send' else 'send'} for rank {r}")
        if quitters:
            return "; ".join(waits) + ", but " + "; ".join(quitters) + \
                ": every send needs a matching recv on the other rank"
        return ("deadlock: " + "; ".join(waits) + ". A blocking send returns only once the "
                "receiver has posted the matching recv, so ranks that all send first (or all "
                "receive first) wait for each other forever; alternate the order, e.g. even "
                "ranks send then receive, odd ranks receive then send")

    def finish(self, rank: int) -> None:
        with self._cond:
            self.done[rank] = True
            self._cond.notify_all()


def threaded_p2p_ranks(call: Callable[..., Any], rank_args: Sequence[Sequence[Any]]) -> P2PRun:
    """``call(*rank_args[r], send=, recv=, rank=r, world_size=)`` on every rank r, as threads."""
    fake = PointToPoint(len(rank_args))
    return P2PRun(rank_threads(call, rank_args, fake.for_rank, fake.finish), fake.sent)


# ---------------------------------------------------------------- real gloo ranks

def to_plain(value: Any) -> Any:
    """Tensors (nested in tuples/lists/dicts) as plain lists, for a process queue.

    A module travels as itself (pickled), but pickling drops every parameter's
    ``.grad``: the gradients travel beside it and ``from_plain`` puts them back.
    """
    if isinstance(value, torch.nn.Module):
        return {"__module__": value, "grads": [to_plain(p.grad) for p in value.parameters()]}
    if isinstance(value, torch.Tensor):
        t = value.detach().cpu()
        return {"__tensor__": str(t.dtype).removeprefix("torch."), "shape": list(t.shape),
                "values": t.reshape(-1).tolist()}
    if isinstance(value, (list, tuple)):
        return {"__seq__": type(value).__name__, "items": [to_plain(v) for v in value]}
    if isinstance(value, dict):
        return {"__dict__": {k: to_plain(v) for k, v in value.items()}}
    return value


def from_plain(value: Any) -> Any:
    if isinstance(value, dict) and "__module__" in value:
        module = value["__module__"]
        for param, grad in zip(module.parameters(), value["grads"]):
            param.grad = from_plain(grad)
        return module
    if isinstance(value, dict) and "__tensor__" in value:
        dtype = getattr(torch, value["__tensor__"])
        return torch.tensor(value["values"], dtype=dtype).reshape(value["shape"])
    if isinstance(value, dict) and "__seq__" in value:
        items = [from_plain(v) for v in value["items"]]
        return tuple(items) if value["__seq__"] == "tuple" else items
    if isinstance(value, dict) and "__dict__" in value:
        return {k: from_plain(v) for k, v in value["__dict__"].items()}
    return value


_context: multiprocessing.context.ForkServerContext | None = None


def _forkserver() -> multiprocessing.context.ForkServerContext:
    global _context
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload(["torch", "torch.distributed", "grader.contract.harness"])
    return _context


def gloo_ranks(path: Path, exercise_id: str, function: str,
               rank_args: Sequence[Sequence[Any]], forbid: Mapping[str, str],
               timeout_s: float = 60.0, p2p: bool = False) -> list[Any]:
    """Run ``function(*rank_args[r])`` from the file ``path`` on gloo ranks.

    With ``p2p``, point-to-point drills get what ``threaded_p2p_ranks`` passes, for
    real: ``send=torch.distributed.send, recv=torch.distributed.recv, rank=r,
    world_size=len(rank_args)`` as keywords.
    """
    ctx = _forkserver()
    world = len(rank_args)
    results: list[Any] = [None] * world
    with tempfile.TemporaryDirectory(prefix="torchdrill-gloo-") as tmp:
        q = ctx.Queue()
        procs = [ctx.Process(target=_gloo_rank, daemon=True,
                             args=(str(path), exercise_id, function, r, world,
                                   f"{tmp}/rendezvous", to_plain(list(rank_args[r])),
                                   dict(forbid), q, p2p))
                 for r in range(world)]
        for p in procs:
            p.start()
        outcomes: dict[int, tuple] = {}
        try:
            while len(outcomes) < world:
                rank, *payload = q.get(timeout=timeout_s)
                outcomes[rank] = tuple(payload)
                if payload[0] != "ok":
                    break  # the others may wait for this rank forever
        except queue_module.Empty:
            raise TimedOut(Message(GLOO_TIMED_OUT, {"function": function, "world": world,
                                                    "seconds": timeout_s})) from None
        finally:
            for p in procs:
                p.join(timeout=5)
                if p.is_alive():
                    p.kill()
                    p.join()
            q.close()
    for rank in sorted(outcomes):
        kind, *rest = outcomes[rank]
        if kind == "not_attempted":
            raise NotAttempted(rest[0])
        if kind == "submission_error":
            raise SubmissionError(rest[0])
        if kind == "forbidden":
            raise AssertionError(rest[0])
        if kind == "error":
            type_name, message, tb = rest
            raise StudentError(f"{function}() on gloo rank {rank}",
                               RuntimeError(f"{type_name}: {message}"), tb)
        results[rank] = from_plain(rest[0])
    return results


def gloo_rank_call(fn: Callable[..., Any], function: str, path: Path | str,
                   forbidden: Any, args: Sequence[Any], rank: int, world: int,
                   init_file: str, p2p: bool = False) -> Any:
    """One gloo rank: join the group through ``init_file``, then run the student's
    ``fn(*args)`` under the drill's guard (``grader.contract.call.guarded_call``). Runs in a
    rank process: a forkserver child here, a sandbox worker when grading in one."""
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    extra = {"send": dist.send, "recv": dist.recv, "rank": rank, "world_size": world} if p2p else {}
    result = guarded_call(fn, f"{function}()", Path(path), forbidden, args, extra)
    dist.destroy_process_group()
    return result


def _gloo_rank(path: str, exercise_id: str, function: str, rank: int, world: int,
               init_file: str, plain_args: Any, forbid: dict[str, str], q: Any,
               p2p: bool = False) -> None:
    """One rank, in a process forked from the forkserver."""
    from grader.contract.forbid import Forbidden
    from grader.contract.loader import load_exercise

    root = Path(path[: -len(exercise_id) - 3])
    try:
        fn = getattr(load_exercise(root, exercise_id), function)
        result = gloo_rank_call(fn, function, path, Forbidden(forbid), from_plain(plain_args),
                                rank, world, init_file, p2p)
        q.put((rank, "ok", to_plain(result)))
    except NotAttempted as exc:
        q.put((rank, "not_attempted", str(exc)))
    except SubmissionError as exc:
        q.put((rank, "submission_error", str(exc)))
    except AssertionError as exc:  # a forbidden API
        q.put((rank, "forbidden", str(exc)))
    except StudentError as exc:
        q.put((rank, "error", type(exc.original).__name__, str(exc.original), exc.traceback_text))
    except BaseException as exc:  # noqa: BLE001 - reported to the grader
        q.put((rank, "error", type(exc).__name__, str(exc), ""))
