"""The trusted side of the trust boundary: run a submission in sandboxed workers.

``SandboxedImplementation`` is the ``impl`` the tests see under ``--isolation
process`` or ``sandbox``. It keeps every guarantee of the in-process one (same
outcomes, same counterexample records) but sends each call to a worker
(``grader.sandbox.worker``) and rebuilds the answer from plain data (``grader.sandbox.wire``).

One ``Sandbox`` per submission and pytest process: a private folder holding a
copy of the submission's ``.py`` files (nothing else from its folder), and one
worker per exercise, forked from this process's zygote (``grader.sandbox.zygote``: a
clean interpreter that imported torch once and outlives submissions), so an
exercise that crashes, hangs or poisons its interpreter costs only its own
points. The grader enforces wall-clock limits itself: a call past
``--call-timeout`` kills its worker (the next call gets a fresh one), and after
``MAX_TIMEOUTS`` such calls the function is not called again: its remaining
tests are "timed out" at once.

Gradients cross too: when a call's inputs require grad and its outputs do, the
outputs come back attached to a ``_Bridge`` autograd node whose backward asks
the worker for the gradients through the graph it kept.
"""

from __future__ import annotations

import atexit
import builtins
import ctypes
import itertools
import os
import socket
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

from grader.contract import effects, harness
from grader.contract.arguments import Targets, grad_changed, same_tensor
from grader.contract.call import refuse_after_timeouts
from grader.contract.describe import describe
from grader.contract.forbid import Forbidden
from grader.contract.impl import Implementation
from grader.core import sources
from grader.core.files import remove_tree
from grader.core.outcomes import BrokenContract, NotAttempted, StudentError, SubmissionError, TimedOut
from grader.sandbox import confine, wire
from grader.sandbox.zygote import START_TIMEOUT_S, SandboxBroken, SandboxError, Zygote, zygote_for
from grader.sandbox.zygote import close_zygotes as _stop_zygotes

ISOLATION_MODES = ("none", "process", "sandbox")
DEFAULT_CALL_TIMEOUT_S = 10.0
GLOO_TIMEOUT_S = 60.0
MAX_REPLY_OUTPUT = 64 * 1024  # characters of printed output taken from one reply
MAX_TEST_OUTPUT = 256 * 1024  # characters echoed per test (one impl), all replies together


class _WorkerDied(Exception):
    pass


# ---------------------------------------------------------------- the sandbox

class Sandbox:
    """One submission's copy, workers and timeout counts, served by this process's
    zygote for the plan (see the module docstring)."""

    def __init__(self, submission: Path, isolation: str, off: Collection[str] = (),
                 call_timeout: float = DEFAULT_CALL_TIMEOUT_S, warm: bool = False):
        """``warm``: the zygote is to import torch's lazy heavy modules up front
        (``grader.sandbox.zygote.warm_for``)."""
        self.submission = submission
        self.call_timeout = call_timeout
        self.plan = confine.plan(isolation, off)
        self.zygote = zygote_for(self.plan, warm)
        self.tmp = Path(tempfile.mkdtemp(prefix="s", dir=self.zygote.tmp))
        os.chmod(self.tmp, 0o755)
        self.copy = self.tmp / "submission"
        copy_sources(submission, self.copy)
        self.applied: dict[str, str] | None = None
        self.workers: dict[tuple[str, int | None], _Worker] = {}  # (exercise, rank or None)
        self.timeouts: Counter[tuple[str, str]] = Counter()
        self._timed_out_run: object = None  # the rank run whose ranks' timeouts count as one
        self._serials = itertools.count(1)  # next() is atomic: rank runs fork from threads
        self._restarts_before = self.zygote.restarts
        self.broken: str | None = None  # why this sandbox stopped working (``new_worker``)
        self.gpu_checked = False  # ``check_gpu`` found that the workers can use the GPU

    @property
    def restarts(self) -> int:
        """Zygote restarts while this submission was graded."""
        return self.zygote.restarts - self._restarts_before

    def fork(self, exercise: str, forbid: dict[str, str], role: str = "worker",
             shared: Path | None = None, gpu: bool = False) -> _Worker:
        """A new worker for ``exercise``, confined, with its own private tmp (and
        ``shared``, a folder gloo ranks meet in, also writable). ``gpu``: the worker
        tries the GPU before it says hello, and says how that went (``check_gpu``)."""
        tmp = self.private(f"w{next(self._serials)}")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        request = {"op": "fork", "plan": self.plan.to_json(), "copy": str(self.copy),
                   "submission": str(self.submission), "exercise": exercise, "forbid": forbid,
                   "tmp": str(tmp), "role": role, "shared": str(shared) if shared else None,
                   "make": self.plan.on("bwrap"), "gpu": gpu}
        try:
            pid = int(self.zygote.exchange(request, [theirs.fileno()])["pid"])
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        worker = _Worker(self.zygote, ours, pid, tmp)
        ours.settimeout(START_TIMEOUT_S)
        try:
            hello, _ = wire.receive(ours)
        except (OSError, EOFError, wire.WireError) as exc:
            worker.kill()
            raise SandboxError(f"a sandbox worker did not start ({exc}); zygote log: "
                               f"{self.zygote.log()}") from None
        if self.applied is None:
            self.applied = {k: str(v) for k, v in dict(hello.get("applied") or {}).items()}
        worker.gpu = str(hello.get("gpu", ""))[:2000]
        return worker

    def private(self, name: str) -> Path:
        """A folder only this submission's workers may write in. In bubblewrap it is on
        the zygote's scratch tmpfs (a fixed size, apart from every grader's folders: a
        worker that fills it fills its own; the worker makes it); else beside the copy,
        made here for the workers' uid."""
        if self.plan.on("bwrap"):
            return Path(confine.SCRATCH) / self.tmp.name / name
        path = self.tmp / name
        path.mkdir(mode=0o700)
        if self.plan.on("uid"):
            os.chown(path, self.plan.uid, self.plan.uid)
        return path

    def new_worker(self, exercise: str, forbid: dict[str, str], role: str = "worker",
                   shared: Path | None = None, gpu: bool = False) -> _Worker:
        """``fork``, with one retry from a new zygote (a degraded sandbox may let a
        student kill the zygote). A new zygote that cannot fork either is the grader's
        failure, never the student's: ``SandboxBroken`` stops the grading, now and at
        every later request, instead of scoring each test as failed."""
        if self.broken is not None:
            raise SandboxBroken(self.broken)
        try:
            return self.fork(exercise, forbid, role, shared, gpu)
        except SandboxError:
            self.zygote.restart()
        try:
            return self.fork(exercise, forbid, role, shared, gpu)
        except SandboxError as exc:
            self.broken = f"the sandbox stopped working: {exc}"
            raise SandboxBroken(self.broken) from None

    def check_gpu(self, exercise: str, forbid: dict[str, str]) -> None:
        """Before the first request that carries a CUDA tensor: can this sandbox's workers
        use the GPU? Asked once, of a new worker of ``exercise`` that tries the GPU before
        it says hello, so before any submission code runs: its word can be believed. A
        sandbox that cannot reach the GPU is the grader's failure (``SandboxBroken``),
        never a zero on every cuda test (bubblewrap without the device files, Landlock
        refusing the driver's ioctls)."""
        if self.gpu_checked:
            return
        probe = self.new_worker(exercise, forbid, gpu=True)
        probe.kill()
        if probe.gpu:
            self.broken = (f"the sandbox's workers cannot use the GPU this grader uses: {probe.gpu} "
                           f"(layers: {', '.join(f'{k} {v}' for k, v in (self.applied or {}).items())})")
            raise SandboxBroken(self.broken)
        self.gpu_checked = True

    def worker(self, exercise: str, forbid: dict[str, str], rank: int | None = None) -> _Worker:
        """``exercise``'s live worker (or the one of its rank runs' ``rank``), started if
        it has none."""
        worker = self.workers.get((exercise, rank))
        if worker is None or not worker.alive:
            worker = self.workers[exercise, rank] = self.new_worker(exercise, forbid)
        return worker

    def forget(self, exercise: str, rank: int | None = None) -> None:
        """Kill ``exercise``'s worker (or its ``rank``'s): the next request forks a new one."""
        worker = self.workers.pop((exercise, rank), None)
        if worker is not None:
            worker.kill()

    def request(self, exercise: str, forbid: dict[str, str], function: str,
                header: dict[str, Any], buffers: Sequence[memoryview],
                listener: Listener | None = None, rank: int | None = None,
                run: object = None) -> tuple[dict[str, Any], memoryview]:
        """Send one request to ``exercise``'s worker (``rank``'s, for one rank of a rank
        run) and wait for its answer, within the limit (``listener`` serves what the
        worker says meanwhile: a rank's collective, a recorder). ``run``: the rank run
        this request belongs to; its ranks, which wait on each other, time out together
        and count as one timeout."""
        key = (exercise, function)
        refuse_after_timeouts(self.timeouts[key], f"{function}()", self.call_timeout)
        worker = self.worker(exercise, forbid, rank)
        try:
            reply, payload = worker.exchange(header, buffers, self.call_timeout, listener)
            if reply.get("exiting"):  # it used a forbidden API and ended itself after saying so
                worker.kill()
            return reply, payload
        except TimeoutError:
            worker.kill()
            if run is None or run is not self._timed_out_run:
                self.timeouts[key] += 1
            self._timed_out_run = run
            raise TimedOut(f"{function}() ran past the {self.call_timeout:g} s limit per call "
                           "(the grader stopped it)") from None
        except _WorkerDied:
            worker.kill()
            raise StudentError(f"{function}()", SystemExit(
                "the process running the submission ended during the call"),
                "the worker process ended: the code called sys.exit/os._exit, crashed, or "
                "went past a resource limit (memory, CPU time, file size)") from None
        except wire.WireError as exc:
            worker.kill()
            raise BrokenContract(f"{function}(): its answer broke the grading contract: {exc}") from None
        except BaseException:  # the grader's own clock, Ctrl-C: the worker's state is unknown
            worker.kill()
            raise

    def close(self) -> None:
        """Stop this submission's workers and remove its copy and what its workers left
        in the scratch space (the zygote stays, for the next submission)."""
        kill_workers(list(self.workers.values()))
        self.workers.clear()
        if self.plan.on("bwrap"):
            try:
                self.zygote.exchange({"op": "wipe", "path": str(Path(confine.SCRATCH) / self.tmp.name),
                                      "uid": self.plan.uid if self.plan.on("uid") else None})
            except SandboxError:
                pass  # a zygote that is gone took its scratch space with it
        remove_tree(self.tmp)

    def warm_up(self) -> None:
        """Warm the zygote up (``grader.sandbox.zygote``), before the worker that is
        about to build an optimizer is forked. A zygote that is gone is the next
        request's to report."""
        try:
            self.zygote.warm_up()
        except SandboxError:
            pass

    def report(self) -> dict[str, Any]:
        """``environment.isolation`` for results.json (how often the zygote had to be
        restarted: a sign of trouble worth a look; whether it was warm at the end)."""
        return {**confine.describe(self.plan, self.applied), "zygote_restarts": self.restarts,
                "zygote_warm": self.zygote.warm, "zygote_shared": self.zygote.attached}


class Listener:
    """What the grader does with the messages a worker sends in the middle of a request."""

    def hears(self, message: dict[str, Any]) -> bool:
        """Whether ``message`` is one of this listener's (else it is the answer)."""
        return False

    def heard(self, message: dict[str, Any], payload: memoryview, worker: _Worker) -> None:
        """Serve ``message`` (answering through ``worker.send`` if it asks)."""

    def close(self) -> None:
        """The request is over, however it ended."""


class _Worker:
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
        whole exchange is within ``timeout`` (``TimeoutError`` past it)."""
        deadline = time.monotonic() + timeout
        with _staying_on_this_cpu() as cpu:
            header["cpu"] = cpu  # the worker moves there: see ``grader.sandbox.worker.follow_cpu``
            try:
                self.sock.settimeout(timeout)
                self.send(header, buffers)
                while True:
                    message, payload = wire.receive(self.sock)
                    if listener is None or not listener.hears(message):
                        return message, payload
                    listener.heard(message, payload, self)
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise TimeoutError("the worker kept talking past the call's limit")
                    self.sock.settimeout(left)
            except (EOFError, ConnectionError, BrokenPipeError):
                raise _WorkerDied() from None
            finally:
                if listener is not None:
                    listener.close()

    def kill(self) -> None:
        kill_workers([self])


def kill_workers(workers: Sequence[_Worker]) -> None:
    """Kill ``workers`` with one request per zygote: each is killed before any is
    waited for, so their exits overlap (closing a sandbox with 24 workers took
    304 ms one request at a time, 92 ms so)."""
    alive = [w for w in workers if w._alive]
    for worker in alive:
        worker._alive = False
    by_zygote: dict[int, list[_Worker]] = {}
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


def _cpu_reader() -> Callable[[], int | None]:
    """libc's ``sched_getcpu``: the CPU the calling thread runs on (None without one)."""
    try:
        getcpu = ctypes.CDLL(None).sched_getcpu
    except (OSError, AttributeError):
        return lambda: None
    getcpu.restype = ctypes.c_int
    return lambda: (cpu if (cpu := getcpu()) >= 0 else None)


current_cpu = _cpu_reader()


@contextmanager
def _staying_on_this_cpu() -> Iterator[int | None]:
    """Keep the calling thread on its CPU while it waits for its worker; yield the CPU.

    The worker moves to that CPU (``grader.sandbox.worker.follow_cpu``), so both wake-ups
    of a request happen on the CPU that just went idle. Unpinned, the scheduler
    wakes the waiting grader on the other, idle CPU and the pair chases each other:
    a small call's round trip measured 0.96 ms unpinned, 0.78 ms with only the
    worker following, 0.51 ms with this (2-core VM, one run each). The pin is lifted
    after every request, so nothing stops the scheduler from moving the grader.
    """
    cpu = current_cpu()
    try:
        allowed = os.sched_getaffinity(0) if cpu is not None else None
        if allowed is not None and cpu is not None:
            os.sched_setaffinity(0, {cpu})
    except (OSError, AttributeError):  # no affinity here (not Linux): nothing to keep
        allowed = cpu = None
    try:
        yield cpu
    finally:
        if allowed is not None:
            os.sched_setaffinity(0, allowed)


def copy_sources(submission: Path, dest: Path) -> None:
    """Copy the submission's graded sources (``grader.core.sources``: ``.py`` files, no
    links, nothing else, size-capped) into ``dest``, readable by the worker."""
    dest.mkdir(mode=0o755)
    try:
        listing = sources.walk(submission, str(submission))
    except (sources.SourceProblem, OSError):
        return  # nothing to copy: every drill reads as missing
    total = 0
    for rel, member in sources.select(listing.members).chosen:
        data = sources.read(submission / member.path)
        if data is None:
            continue
        total += len(data)
        if total > sources.MAX_SUBMISSION_BYTES:
            break
        target = dest.joinpath(*rel.split("/"))
        for folder in reversed(target.relative_to(dest).parents[:-1]):
            (dest / folder).mkdir(exist_ok=True, mode=0o755)
        target.write_bytes(data)
        os.chmod(target, 0o644)


# ---------------------------------------------------------------- per process

_sandboxes: dict[tuple[Any, ...], Sandbox] = {}


def sandbox_for(submission: Path, isolation: str, off: Collection[str] = (),
                call_timeout: float = DEFAULT_CALL_TIMEOUT_S, warm: bool = False) -> Sandbox:
    key = (submission, isolation, tuple(sorted(off)), call_timeout)
    if key not in _sandboxes:
        _sandboxes[key] = Sandbox(submission, isolation, off, call_timeout, warm)
    return _sandboxes[key]


def isolation_report() -> dict[str, Any] | None:
    for sandbox in _sandboxes.values():
        if sandbox.applied is not None:
            return sandbox.report()
    return None


def close_all() -> None:
    """Close every submission's sandbox (at the end of a pytest session)."""
    while _sandboxes:
        _, sandbox = _sandboxes.popitem()
        sandbox.close()


def close_zygotes() -> None:
    """Close every sandbox, then stop this process's zygotes (``grade-all``'s grading
    process does it before removing the folder they live in)."""
    close_all()
    _stop_zygotes()


atexit.register(close_all)  # after zygote's own: atexit runs it first


# ---------------------------------------------------------------- the impl

class SandboxedImplementation(Implementation):
    """``impl`` whose student code runs in a sandbox worker (``grader.sandbox.worker``)."""

    def __init__(self, root: Path, exercise_id: str, forbidden: Forbidden, sandbox: Sandbox,
                 mutates: Mapping[str, Collection[str]] | None = None):
        super().__init__(root, exercise_id, forbidden, mutates, guard_arguments=False)
        self.sandbox = sandbox
        self.output = _Output()

    def _send(self, function: str, header: dict[str, Any], values: dict[str, Any],
              targets: Targets | None = None, ranks: _RankServer | None = None) -> tuple[Any, wire.Decoder]:
        """Send ``header`` plus ``values`` (encoded); return the answer's value and decoder.
        ``targets``: the call's arguments; what the worker says the call changed of them
        is written into the grader's objects only as far as the function may change them.
        ``ranks``: serves one rank's collectives here, as its worker makes them (the
        request goes to that rank's worker)."""
        rank = ranks.rank if ranks is not None else None
        encoder = wire.Encoder(strict=True)
        header = {**header, **{k: encoder.value(v) for k, v in values.items()},
                  "objects": encoder.objects}
        listener = _Listeners(_Recorders(encoder.table), ranks)
        if encoder.optimizers:
            self.sandbox.warm_up()
        if encoder.gpu:
            self.sandbox.check_gpu(self.exercise_id, self.forbidden.hints)
        reply, payload = self.sandbox.request(self.exercise_id, self.forbidden.hints, function,
                                              header, encoder.buffers, listener, rank,
                                              ranks.fake if ranks is not None else None)
        self.output.echo(reply)
        self.effects += _effects(reply)
        if "raise" in reply:
            raise _rebuild(reply["raise"], function)
        try:
            with wire.refusing_malformed():  # a forged frame is the worker's error, never the test's
                # A call's answer lists the objects it was sent first (what became of them); a
                # backward pass's answer holds new gradients only.
                known = encoder.table if header["op"] != "backward" else []
                decoder = wire.Decoder(reply.get("objects"), payload, known=known,
                                       write_back=_WriteBack(targets or Targets(), self.allowed(function),
                                                             self.mutations))
                decoder.all_objects()
                graph = reply.get("graph")
                if graph:
                    self._attach(decoder, graph, encoder.table)
                return decoder.value(reply.get("ok")), decoder
        except wire.WireError as exc:
            self.sandbox.forget(self.exercise_id, rank)
            raise BrokenContract(f"{function}(): its answer broke the grading contract: {exc}") from None

    def _attach(self, decoder: wire.Decoder, graph: dict[str, Any], sent: list[Any]) -> None:
        """Connect the call's outputs to its inputs through a ``_Bridge`` node."""
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
            problem = _gradient_problem(got, inputs)
            if problem:  # raised inside autograd: as the worker's broken contract, never the test's
                self.sandbox.forget(self.exercise_id)
                raise BrokenContract(f"the backward pass through {self.exercise_id}: its answer broke "
                                     f"the grading contract: {problem}")
            return got

        bridged = _Bridge.apply(backward, tuple(o.detach() for o in outputs), *inputs)
        for i, tensor in zip(graph["outputs"], bridged):
            decoder.objects[i] = tensor

    def invoke(self, name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        value, _ = self._send(name, {"op": "call", "name": name},
                              {"args": list(args), "kwargs": dict(kwargs)}, Targets.of(args, kwargs))
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
                                  _RankServer(fake, rank, collective))
            return value

        return harness.rank_threads(call, rank_args, lambda rank: {"rank": rank}, fake.finish)

    def run_gloo(self, name: str, rank_args: Sequence[Sequence[Any]], p2p: bool = False) -> list[Any]:
        """Every rank is its own worker, forked from the zygote like the others."""
        world = len(rank_args)
        rendezvous = self.sandbox.private(f"gloo-{os.getpid()}-{id(rank_args)}")
        ranks: list[_Worker] = []
        try:
            for _ in range(world):
                ranks.append(self.sandbox.new_worker(self.exercise_id, self.forbidden.hints,
                                                     role="rank", shared=rendezvous))
            encoders = []
            for rank, worker in enumerate(ranks):
                encoder = wire.Encoder(strict=True)
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
                    raise TimedOut(f"{name}() on {world} gloo ranks did not finish in "
                                   f"{GLOO_TIMEOUT_S:.0f} s") from None
                except (EOFError, ConnectionError):
                    raise StudentError(f"{name}() on gloo rank {rank}", SystemExit(
                        "the rank's process ended during the call"), "") from None
                self.output.echo(reply)
                if "raise" in reply:
                    raise _rebuild(reply["raise"], f"{name}() on gloo rank {rank}")
                try:
                    with wire.refusing_malformed():
                        results.append(wire.Decoder(reply.get("objects"), payload).value(reply.get("ok")))
                except wire.WireError as exc:
                    raise BrokenContract(f"{name}() on gloo rank {rank}: its answer broke the grading "
                                         f"contract: {exc}") from None
            return results
        finally:
            kill_workers(ranks)
            if not self.sandbox.plan.on("bwrap"):
                remove_tree(rendezvous)


class _Listeners(Listener):
    """Several listeners, each hearing its own messages."""

    def __init__(self, *listeners: Listener | None):
        self.listeners = [listener for listener in listeners if listener is not None]

    def hears(self, message: dict[str, Any]) -> bool:
        return any(listener.hears(message) for listener in self.listeners)

    def heard(self, message: dict[str, Any], payload: memoryview, worker: _Worker) -> None:
        next(listener for listener in self.listeners if listener.hears(message)).heard(message, payload, worker)

    def close(self) -> None:
        for listener in self.listeners:
            listener.close()


class _Recorders(Listener):
    """Recorders the test put on its modules (``harness.BatchSizes``) record here, in the
    grader, each time the worker's copy of the module runs forward."""

    def __init__(self, table: Sequence[Any]):
        self.table = table

    def hears(self, message: dict[str, Any]) -> bool:
        return "record" in message

    def heard(self, message: dict[str, Any], payload: memoryview, worker: _Worker) -> None:
        index, size = message.get("record"), message.get("size")
        module = self.table[index] if type(index) is int and 0 <= index < len(self.table) else None
        if not isinstance(module, torch.nn.Module) or type(size) is not int or size < 0:
            raise wire.WireError("a recorder's message names no recorded module")
        for hook in module._forward_pre_hooks.values():
            if type(hook) is harness.BatchSizes:
                hook.sizes.append(size)


class _RankServer(Listener):
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
    waiting on it get an error at once. A thread per message cost the three rank
    drills 0.5 s of their 5.7 s, sandboxed (one run each way).
    """

    def __init__(self, fake: Any, rank: int, collective: str | None = None):
        self.fake, self.rank, self.collective = fake, rank, collective

    def hears(self, message: dict[str, Any]) -> bool:
        return "rank_done" in message or "collective" in message or "p2p" in message

    def heard(self, message: dict[str, Any], payload: memoryview, worker: _Worker) -> None:
        if "rank_done" in message:
            self._own(message.get("rank_done"))
            worker.send({"all_done": True})
            return
        self._own(message.get("rank"))
        with wire.refusing_malformed("a rank's message"):
            value = wire.Decoder(message.get("objects", []), payload).value(message.get("value"))
        self._serve(message, self.rank, value, worker)

    def _own(self, rank: Any) -> None:
        if rank != self.rank or type(rank) is not int:
            raise wire.WireError(f"rank {self.rank}'s worker spoke for rank {str(rank)[:20]}")

    def _serve(self, message: dict[str, Any], rank: int, value: Any, worker: _Worker) -> None:
        encoder = wire.Encoder(strict=False)
        try:
            answer = {"rank": rank, "value": encoder.value(self._call(message, rank, value))}
        except harness.CollectiveMismatch as exc:
            answer, encoder = {"rank": rank, "error": str(exc)}, wire.Encoder(strict=False)
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


class _WriteBack:
    """Writes what a call did to its arguments into the grader's own objects, as far as
    the function's spec lets it change them (``grader.contract.arguments``); the rest
    is not written, only told (``mutations``): the test's objects stay what the test
    made, so no oracle computed from them after the call can be steered."""

    def __init__(self, targets: Targets, allowed: frozenset[str], mutations: list[str]):
        self.targets, self.allowed, self.mutations = targets, allowed, mutations

    def __call__(self, original: Any, new: Any) -> None:
        kind = self.targets.kind.get(id(original), "tensors")
        label = self.targets.label.get(id(original), "an argument")
        if isinstance(original, torch.Tensor):
            self._tensor(original, new, kind, label)
        elif isinstance(original, torch.nn.Module):
            if kind in self.allowed:
                wire.write_back(original, new)
            elif wire.module_changed(original, new):
                self.mutations.append(f"changed {label}'s modules, parameters or training mode")
        elif kind in self.allowed:
            wire.write_back(original, new)
        elif wire.optimizer_changed(original, new):
            self.mutations.append(f"changed {label}'s state or options")

    def _tensor(self, original: torch.Tensor, new: Any, kind: str, label: str) -> None:
        if not isinstance(new, torch.Tensor):
            raise wire.WireError("a tensor came back as something else")
        if not same_tensor(original, new):
            if kind in self.allowed:
                wire.write_values(original, new)
            else:
                self.mutations.append(f"changed {label} in place")
        if original.is_leaf and grad_changed(original.grad, new.grad):
            if "grads" in self.allowed:
                wire.write_grad(original, new)
            else:
                self.mutations.append(f"changed {label}.grad")
        if original.is_leaf and new.requires_grad != original.requires_grad and (
                original.dtype.is_floating_point or original.dtype.is_complex):
            if kind in self.allowed:
                original.requires_grad_(new.requires_grad)
            else:
                self.mutations.append(f"changed {label}.requires_grad")


class _Bridge(torch.autograd.Function):
    """Outputs computed in a worker, differentiable with respect to the grader's inputs."""

    @staticmethod
    def forward(ctx: Any, backward: Callable[[Sequence[torch.Tensor]], list[Any]],
                outputs: tuple[torch.Tensor, ...], *inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
        ctx.remote_backward = backward
        return outputs

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor) -> tuple[Any, ...]:
        return (None, None, *ctx.remote_backward([g.contiguous() for g in grads]))


def _gradient_problem(got: Any, inputs: Sequence[torch.Tensor]) -> str:
    """What is wrong with a backward pass's answer ("" when nothing): one gradient, or
    None, per input, of its shape, dtype and device (else autograd raises in the test)."""
    if type(got) is not list or len(got) != len(inputs):
        return "the backward pass answered the wrong number of gradients"
    for g, x in zip(got, inputs):
        if g is not None and not (isinstance(g, torch.Tensor) and g.shape == x.shape
                                  and g.dtype == x.dtype and g.device == x.device):
            return f"a gradient does not match its input (shape {list(x.shape)}, {x.dtype})"
    return ""


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


def _rebuild(info: Any, function: str) -> BaseException:
    """The outcome exception a worker described, made here from builtins only."""
    if not isinstance(info, dict):
        return BrokenContract(f"{function}(): the worker's answer was malformed")
    kind, message = info.get("kind"), str(info.get("message", ""))[:4000]
    if kind == "wire":
        return BrokenContract(f"{function}(): its answer broke the grading contract: {message}")
    if kind == "not_attempted":
        return NotAttempted(message)
    if kind == "submission_error":
        return SubmissionError(message)
    if kind == "assertion":
        return AssertionError(message)
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
