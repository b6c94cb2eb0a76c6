"""A submission's sandbox, and this process's sandboxes (``sandbox_for``).

One ``Sandbox`` per submission and pytest process: a private folder holding a
copy of the submission's ``.py`` files (nothing else from its folder), and one
worker per exercise, forked from this process's zygote (``grader.sandbox.zygote``: a
clean interpreter that imported torch once and outlives submissions), so an
exercise that crashes, hangs or poisons its interpreter costs only its own
points. The grader enforces wall-clock limits itself: a call past
``--call-timeout`` kills its worker (the next call gets a fresh one), and after
``MAX_TIMEOUTS`` such calls the function is not called again: its remaining
tests are "timed out" at once.

The sandboxed ``impl`` that sends each call through it is
``grader.sandbox.sandboxed_impl``.
"""

from __future__ import annotations

import atexit
import itertools
import os
import socket
import tempfile
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from grader.contract.call import refuse_after_timeouts
from grader.core import sources
from grader.core.files import remove_tree
from grader.core.i18n import N_, Message
from grader.core.outcomes import BrokenContract, StudentError, TimedOut
from grader.core.time_budgets import DEFAULT_CALL_TIMEOUT_S
from grader.sandbox import confine, wire
from grader.sandbox.handles import Listener, WorkerDied, WorkerHandle, kill_workers
from grader.sandbox.zygote import START_TIMEOUT_S, SandboxBroken, SandboxError, zygote_for
from grader.sandbox.zygote import close_zygotes as _stop_zygotes

# A worker's answer the grader could not take (malformed, oversize): the error says what was wrong with it.
BROKE = N_("{function}(): its answer broke the grading contract: {error}")

# ---------------------------------------------------------------- the sandbox

class Sandbox:
    """One submission's copy, workers and timeout counts, served by this process's
    zygote for the plan (see the module docstring)."""

    def __init__(self, submission: Path, isolation: str, off: Collection[str] = (),
                 call_timeout: float = DEFAULT_CALL_TIMEOUT_S, warm: bool = False,
                 files: Mapping[str, bytes] | None = None):
        """``warm``: the zygote is to import torch's lazy heavy modules up front
        (``grader.sandbox.zygote.warm_for``); ``files``: the submission's files as the
        intake read them (None: read from ``submission``)."""
        self.submission = submission
        self.call_timeout = call_timeout
        self.plan = confine.plan(isolation, off)
        self.zygote = zygote_for(self.plan, warm)
        self.tmp = Path(tempfile.mkdtemp(prefix="s", dir=self.zygote.tmp))
        os.chmod(self.tmp, 0o755)
        self.copy = self.tmp / "submission"
        copy_sources(submission, self.copy, files)
        self.applied: dict[str, str] | None = None
        self.workers: dict[tuple[str, int | None], WorkerHandle] = {}  # (exercise, rank or None)
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
             shared: Path | None = None, gpu: bool = False) -> WorkerHandle:
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
        worker = WorkerHandle(self.zygote, ours, pid, tmp)
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
                   shared: Path | None = None, gpu: bool = False) -> WorkerHandle:
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

    def worker(self, exercise: str, forbid: dict[str, str], rank: int | None = None) -> WorkerHandle:
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
            raise TimedOut(Message("{function}() ran past the {limit:g} s limit per call (the grader stopped it)",
                                   {"function": function, "limit": self.call_timeout})) from None
        except WorkerDied:
            worker.kill()
            raise StudentError(f"{function}()", SystemExit(
                "the process running the submission ended during the call"),
                "the worker process ended: the code called sys.exit/os._exit, crashed, or "
                "went past a resource limit (memory, CPU time, file size)") from None
        except wire.WireError as exc:
            worker.kill()
            raise BrokenContract(Message(BROKE, {"function": function, "error": str(exc)})) from None
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


def copy_sources(submission: Path, dest: Path, files: Mapping[str, bytes] | None = None) -> None:
    """Copy the submission's graded sources into ``dest``, readable by the worker:
    ``files`` as the intake read them (checked there), else those read from the folder
    (``grader.core.sources``: ``.py`` files, no links, nothing else, size-capped)."""
    dest.mkdir(mode=0o755)
    for rel, data in (files.items() if files is not None else _read_sources(submission)):
        parts = rel.split("/")
        if rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
            continue  # the intake names files as under exercises/; anything else is not copied
        target = dest.joinpath(*parts)
        for folder in reversed(target.relative_to(dest).parents[:-1]):
            (dest / folder).mkdir(exist_ok=True, mode=0o755)
        target.write_bytes(data)
        os.chmod(target, 0o644)


def _read_sources(submission: Path) -> Iterator[tuple[str, bytes]]:
    """The graded sources of the folder ``submission``, up to the submission's size cap."""
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
            return
        yield rel, data


# ---------------------------------------------------------------- per process

_sandboxes: dict[tuple[Any, ...], Sandbox] = {}


def sandbox_for(submission: Path, isolation: str, off: Collection[str] = (),
                call_timeout: float = DEFAULT_CALL_TIMEOUT_S, warm: bool = False,
                files: Mapping[str, bytes] | None = None) -> Sandbox:
    key = (submission, isolation, tuple(sorted(off)), call_timeout)
    if key not in _sandboxes:
        _sandboxes[key] = Sandbox(submission, isolation, off, call_timeout, warm, files)
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
