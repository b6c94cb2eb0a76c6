"""The object behind the ``impl`` fixture: a submission's functions, guarded.

``impl.one_hot(labels)`` calls the student's ``one_hot`` and

- turns ``NotImplementedError`` into ``NotAttempted`` and any other exception
  (``SystemExit`` and pytest's skip included) into ``StudentError``;
- refuses the drill's forbidden APIs during the call (``grader.contract.forbid``);
- records each call's arguments and result in the example hypothesis reports
  (its final replay of the minimal failing input), for the counterexample.

Tests reach student code only through this object and only with plain data, so
a sandboxed backend can later stand in for this in-process one unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from grader.contract import harness
from grader.contract.arguments import allowed_kinds, guarded
from grader.contract.call import CallTimedOut, call_clock, guarded_call, refuse_after_timeouts
from grader.contract.describe import describe
from grader.contract.effects import observed
from grader.contract.forbid import Forbidden, ForbiddenUse
from grader.contract.loader import exercise_path, load_exercise
from grader.core.i18n import Message
from grader.core.outcomes import StudentError, SubmissionError, TimedOut, worded

MAX_RECORDED_CALLS = 12


def _in_final_example() -> bool:
    """True outside hypothesis, or in the final replay of the failing example."""
    from hypothesis import currently_in_test_context
    from hypothesis.control import current_build_context

    if not currently_in_test_context():
        return True
    return bool(current_build_context().is_final)


class Implementation:
    """A submission's exercise module, seen through the grading contract."""

    def __init__(self, root: Path, exercise_id: str, forbidden: Forbidden,
                 mutates: Mapping[str, Collection[str]] | None = None, guard_arguments: bool = True,
                 call_timeout: float | None = None, timeouts: dict[tuple[str, str], int] | None = None,
                 source: bytes | None = None):
        """``mutates``: per function, what its spec lets a call change of its arguments
        (``grader.contract.arguments``); ``guard_arguments``: undo the rest here, after
        each call (a sandbox worker, whose arguments are copies, leaves that to the grader);
        ``call_timeout``: seconds a call may run in this process (``call_clock``); after
        ``MAX_TIMEOUTS`` calls of a function past it (counted in ``timeouts``, which the
        grading session shares between its tests), the function is not called again: its
        properties are timed out at once, as a sandbox worker's are. ``source``: the file's
        bytes as the intake read them (None: read from ``root``)."""
        self.root = root
        self.exercise_id = exercise_id
        self.path = exercise_path(root, exercise_id)
        self.forbidden = forbidden
        self.mutates = {name: allowed_kinds(mutates, name) for name in (mutates or {})}
        self.guard_arguments = guard_arguments
        self.call_timeout = call_timeout
        self.timeouts = timeouts if timeouts is not None else {}
        self.calls: list[dict[str, Any]] = []
        # What the last call (or rank run) changed of the global state a drill may not
        # touch, as sentences (``grader.contract.effects``); it was put back since.
        self.effects: list[str] = []
        # What the last call (or rank run) changed of its arguments beyond what its spec
        # allows, as sentences (``grader.contract.arguments``); it was undone since.
        self.mutations: list[str] = []
        self._changed: list[str] = []  # what earlier calls changed (``changed_arguments``)
        self._module: ModuleType | None = None
        self._used_on_import: ForbiddenUse | None = None
        self._source = source

    def _fresh(self) -> None:
        """A new call's records; what the last call changed of its arguments is kept."""
        self._changed += self.mutations
        self.effects, self.mutations = [], []

    def changed_arguments(self) -> list[str]:
        """What every call through this object changed of its arguments beyond what its
        spec allows, once each (the grading session fails a property on it, whatever the
        property checks: ``Judge.pytest_runtest_makereport``)."""
        return list(dict.fromkeys(self._changed + self.mutations))

    def allowed(self, name: str) -> frozenset[str]:
        """What a call of ``name`` may change of its arguments."""
        return self.mutates.get(name, frozenset())

    @contextmanager
    def _arguments_guarded(self, name: str, args: Any, kwargs: Mapping[str, Any],
                           ranks: bool = False) -> Iterator[None]:
        if not self.guard_arguments:
            yield
            return
        with guarded(args, kwargs, self.allowed(name), self.mutations, ranks):
            yield

    def __repr__(self) -> str:  # shown in hypothesis' failing case: keep it stable
        return f"impl({self.exercise_id})"

    @property
    def module(self) -> ModuleType:
        """The submission's module, imported under the drill's guard: what its top level
        takes of a forbidden API (``from numpy import bincount``) is a use, failing every
        call (as a sandbox worker's armor refuses it)."""
        if self._module is None:
            module: ModuleType | None = None
            with self.forbidden.guard() as uses:
                try:
                    module = load_exercise(self.root, self.exercise_id, source=self._source)
                except SubmissionError:  # the import failed: for the forbidden use, if it made one
                    if not uses:
                        raise
            self._used_on_import = uses[0] if uses else None
            self._module = module if module is not None else ModuleType(self.exercise_id)
        return self._module

    def function(self, name: str) -> Callable[..., Any]:
        module = self.module
        if self._used_on_import is not None:
            raise self._used_on_import.failure(f"{name}()")
        fn = getattr(module, name, None)
        if not callable(fn):
            raise SubmissionError(Message("{path} defines no function {name}()", {"path": str(self.path), "name": name}))
        return fn

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self.call(name, *args, **kwargs)

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call the student's ``name(*args, **kwargs)`` under the contract."""
        record = self._record(name, args, kwargs) if _in_final_example() else None
        self._fresh()
        return self._guarded_call(name, args, kwargs, record)

    def _guarded_call(self, name: str, args: Sequence[Any], kwargs: dict[str, Any],
                      record: dict[str, Any] | None, rank: bool = False) -> Any:
        """``invoke`` (``run``, the call alone, on a rank thread: the rank run observes the
        global state around all its ranks), keeping what it returned or raised in ``record``."""
        try:
            result = self.run(name, args, kwargs) if rank else self.invoke(name, args, kwargs)
        except StudentError as exc:
            if record is not None:
                record["raised"] = f"{type(exc.original).__name__}: {exc.original}"
            raise
        except SubmissionError:
            if record is not None and record in self.calls:  # the file never loaded: no call was made
                self.calls.remove(record)
            raise
        except TimedOut as exc:
            # hypothesis stops at once (no final replay records it): keep the input here, and
            # why the call was stopped as a kept message (``counterexamples.call_ending``)
            record = record if record is not None else self._record(name, args, kwargs)
            if record is not None:
                kept = worded(exc)
                record["timed_out"] = {"message": str(exc), "message_id": kept.to_json() if kept else None}
            raise
        if record is not None:
            record["result"] = describe(result)
        return result

    def invoke(self, name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        """Run the student's function here, in this process (``SandboxedImplementation``
        sends the same request to a worker, which runs this method there)."""
        key = (self.exercise_id, name)
        refuse_after_timeouts(self.timeouts.get(key, 0), f"{name}()", self.call_timeout)
        try:
            with observed(self.effects), self._arguments_guarded(name, args, kwargs), \
                    call_clock(self.call_timeout, f"{name}()"):
                return self.run(name, args, kwargs)
        except CallTimedOut:
            self.timeouts[key] = self.timeouts.get(key, 0) + 1
            raise

    def run(self, name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        """The student's function under the guard, in this process, without observing
        the global state (``invoke`` does; a rank run does around all its ranks)."""
        return guarded_call(self.function(name), f"{name}()", self.path, self.forbidden,
                            args, kwargs)

    def _record(self, name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> dict[str, Any] | None:
        if len(self.calls) >= MAX_RECORDED_CALLS:
            return None
        record = {"function": name, "args": [describe(a) for a in args],
                  "kwargs": {k: describe(v) for k, v in kwargs.items()}}
        self.calls.append(record)
        return record

    # Distributed drills: the rank harness is grader code that runs beside the
    # student's function; only per-rank inputs and outputs cross the contract.

    def run_ranks(self, name: str, rank_args: Sequence[Sequence[Any]],
                  collective: str = "all_reduce") -> harness.RankRun:
        """Run ``name(*rank_args[r], <collective>=fake)`` for every rank r at once,
        as threads sharing a counting in-memory ``all_reduce``."""
        # hypothesis' build context is thread-local: ask here, not in the rank threads
        # (there it always looks like "outside hypothesis" and every example was recorded),
        # and record in rank order here, so the counterexample does not depend on
        # which thread started first.
        records: list[dict[str, Any] | None] = [None] * len(rank_args)
        if _in_final_example():
            for rank, args in enumerate(rank_args):
                record = self._record(name, args, {collective: "in-memory SUM (grader)"})
                if record is not None:
                    record["rank"] = rank
                records[rank] = record
        self._fresh()
        return self.threaded_ranks(name, rank_args, collective, records)

    def threaded_ranks(self, name: str, rank_args: Sequence[Sequence[Any]], collective: str,
                        records: Sequence[dict[str, Any] | None]) -> harness.RankRun:
        def call_on_rank(*args: Any, **kwargs: Any) -> Any:
            return self._guarded_call(name, args, kwargs, records[kwargs[collective].rank], rank=True)

        with observed(self.effects), self._arguments_guarded(name, rank_args, {}, ranks=True):
            return harness.threaded_ranks(call_on_rank, rank_args, collective)

    def run_p2p_ranks(self, name: str, rank_args: Sequence[Sequence[Any]]) -> harness.P2PRun:
        """Run ``name(*rank_args[r], send=, recv=, rank=r, world_size=)`` for every rank r
        at once, as threads with blocking in-memory send/recv (gloo's semantics) that log
        every message and turn a deadlock into an error."""
        records: list[dict[str, Any] | None] = [None] * len(rank_args)
        if _in_final_example():  # in the grader's thread, in rank order (see run_ranks)
            for rank, args in enumerate(rank_args):
                records[rank] = self._record(name, args, {
                    "send": "blocking in-memory send (grader)",
                    "recv": "blocking in-memory recv (grader)",
                    "rank": rank, "world_size": len(rank_args)})
        self._fresh()
        return self.threaded_p2p_ranks(name, rank_args, records)

    def threaded_p2p_ranks(self, name: str, rank_args: Sequence[Sequence[Any]],
                            records: Sequence[dict[str, Any] | None]) -> harness.P2PRun:
        def call_on_rank(*args: Any, **kwargs: Any) -> Any:
            return self._guarded_call(name, args, kwargs, records[kwargs["rank"]], rank=True)

        with observed(self.effects), self._arguments_guarded(name, rank_args, {}, ranks=True):
            return harness.threaded_p2p_ranks(call_on_rank, rank_args)

    def run_gloo(self, name: str, rank_args: Sequence[Sequence[Any]],
                 p2p: bool = False) -> list[Any]:
        """Run ``name(*rank_args[r])`` in real gloo processes, one per rank (with ``p2p``,
        plus ``send=dist.send, recv=dist.recv, rank=r, world_size=`` as keywords)."""
        _ = self.module  # import errors surface here, in the grader, not in a rank
        return harness.gloo_ranks(self.path, self.exercise_id, name, rank_args,
                                  self.forbidden.hints, p2p=p2p)
