"""What the grading plugin does in a run that grades (``grader.grading.plugin`` registers it).

It grades what its ``GradingRequest`` (``grader.grading.request``) asks, and reads
nothing else of the run's options. For graded tests (those in a module marked ``pytest.mark.exercise``):

- collection attaches exercise id, points, weight and markers to
  ``item.user_properties`` (they travel with reports from xdist workers);
- ``impl`` is the submission's functions behind the grading contract, in this
  process or in a sandboxed worker; ``ref`` the reference solution's module;
- a test needing hardware this machine lacks (``cuda``) is "not run here";
- a clock stops a test past its limit, or its drill's budget;
- a ``makereport`` wrapper classifies each phase by what was raised
  (``grader.grading.verdict``) and attaches outcome, message and counterexample;
- on the controller only, a ``ResultsCollector`` folds the reports into
  ``results.json``.
"""

from __future__ import annotations

import json
import math
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any, cast

import pytest

from grader.contract import examples
from grader.contract.call import outer_deadline
from grader.contract.forbid import Forbidden
from grader.contract.impl import Implementation
from grader.contract.loader import load_exercise
from grader.core import course_secret, syllabus, time_budgets
from grader.core.drill_texts import LIST_SEPARATOR
from grader.core.i18n import Message
from grader.core.outcomes import (
    CUDA_REASON,
    ERROR,
    FAILED,
    GLOO_REASON,
    NOT_RUN,
    PASSED,
    TIMED_OUT,
    SubmissionError,
    TimedOut,
)
from grader.core.syllabus import course_root
from grader.core.syllabus import exercise_id as exercise_id_of
from grader.grading import profiles, verdict
from grader.grading.collector import META, OUTCOME, SANDBOX_BROKEN, ResultsCollector, submission_root
from grader.grading.pipeline import COLLECTOR
from grader.grading.request import WORKERINPUT_KEY, GradingRequest
from grader.sandbox import clock, zygote
from grader.sandbox.zygote import SandboxBroken, warm_for

_not_run_reason = pytest.StashKey[str]()
_expired = pytest.StashKey[Message]()  # why a clock stopped the test
_charged = pytest.StashKey[float]()  # what the test's call was charged against its drill's budget
# A drill's wall time may reach this many times its budget before it is stopped all the same:
# the backstop where the kernel keeps no run-queue delay (``grader.sandbox.clock``), so the
# budget charges CPU time only and a sleeping call uses none.
WALL_ALLOWANCE = 4.0
# How often a test's budget clock reads what has been charged so far when it cannot tell
# from the wall clock alone (ranks side by side charge their CPU, more than wall time).
CHARGE_POLL_S = 1.0
BUDGET_RAN_OUT = Message("the drill's grading budget ran out during this test")
SHARED_ZYGOTE = "torchdrill_zygote"  # workerinput: the controller's zygote, shared


def exercise_marker(item: pytest.Item) -> pytest.Mark | None:
    module = item.getparent(pytest.Module)
    if module is None:
        return None
    return next((m for m in module.iter_markers("exercise")), None)


_facts = pytest.StashKey[dict[str, Any]]()  # a graded item's drill facts, as collected


def _meta(item: pytest.Item) -> dict[str, Any] | None:
    """The drill facts ``pytest_collection_modifyitems`` found for a graded item (None: not
    graded). Kept on the item; their JSON in ``user_properties`` carries them to the
    collector, which may be in another process."""
    return item.stash.get(_facts, None)


class GradingSession:
    """The grading plugin's hooks, registered only in a run that grades."""

    def __init__(self, config: pytest.Config, request: GradingRequest):
        import torch

        self.config = config
        self.request = request
        self._references: dict[tuple[Path, str], ModuleType] = {}
        self._budgets: time_budgets.Budgets | None = None
        self._spent: dict[str, float] = {}  # drill id -> seconds its tests were charged in this process
        self._spent_wall: dict[str, float] = {}  # drill id -> wall seconds its tests ran in this process
        self._call_timeouts: dict[tuple[str, str], int] = {}  # (drill, function) -> calls past the limit
        self._unloadable: dict[str, SubmissionError] = {}  # drill -> why its file does not load
        profiles.activate(request.profile)
        self.secret = request.secret
        examples.widen(self.secret is not None)  # before the tests are collected: they build strategies
        # Drill tensors are tiny: extra intra-op threads only fight over the cores, and
        # on a busy machine waking them can cost a small op far more than its own work.
        torch.set_num_threads(1)
        if not config.pluginmanager.hasplugin("terminal"):
            # The pipeline (``-p no:terminal``): no one reads pytest's failure text (results keep their own
            # message and counterexample), and its long form parses the source of every frame,
            # a large part of a stub's grading. One line per failure costs nothing.
            config.option.tbstyle = "line"
        if not hasattr(config, "workerinput"):  # controller (or no xdist): collect results
            drawn = ({"drawn": "secret", "secret": self.secret.digest, "widened": examples.FACTOR}
                     if self.secret is not None else {"drawn": "public"})
            config.pluginmanager.register(ResultsCollector(config, request, drawn), COLLECTOR)

    # ------------------------------------------------------------------ session

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # After every pytest_configure, so after hypothesis' own plugin has loaded the
        # profile named by --hypothesis-profile: shrinking is switched off on top of it.
        if not self.request.shrink:
            profiles.without_shrinking()
        self._start_sandbox_early()

    def _start_sandbox_early(self) -> None:
        """Start the sandbox's zygote now, so it imports torch while pytest collects.

        Only where tests run (not on an xdist controller), and only for an explicit
        ``--submission`` (the ``impl`` fixture asks for the very same sandbox).
        """
        config = self.config
        folder = self.request.folder
        runs_tests = hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None)
        if not self.request.in_process and folder is not None and runs_tests:
            try:
                self._sandbox(folder)
            except SandboxBroken:
                pass  # the first test's ``impl`` asks again, and its report stops the grading

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """pytest-xdist's controller, before each worker starts: the workers share this
        process's zygote (``grader.sandbox.zygote``), started here if ``grade`` did not
        start it early. Where it cannot be shared, each worker starts its own. The
        request travels to the worker too: pytest passes plugin objects to no worker."""
        request = self.request
        node.workerinput[WORKERINPUT_KEY] = request.to_json()
        if request.folder is None:
            return
        started = zygote.start_early(request.isolation, request.sandbox_off, warm_for(_drills_asked(self.config)))
        shared = started.share() if started is not None else None
        if shared is not None:
            node.workerinput[SHARED_ZYGOTE] = shared

    def _sandbox(self, root: Path) -> Any:
        """This process's sandbox for the submission at ``root``, as the options ask."""
        from grader.sandbox import sandboxes
        config = self.config
        shared = getattr(config, "workerinput", {}).get(SHARED_ZYGOTE)
        if shared:
            zygote.attach(shared)
        try:
            return sandboxes.sandbox_for(root, self.request.isolation, self.request.sandbox_off,
                                         self.request.limits.call_s, warm_for(_drills_asked(config)),
                                         self.request.files)
        except (sandboxes.SandboxError, OSError) as exc:  # the grader's failure, never a student's zero
            raise SandboxBroken(f"the sandbox could not start: {exc}") from None

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        sandboxes = sys.modules.get("grader.sandbox.sandboxes")
        if sandboxes is not None:
            sandboxes.close_all()

    # ------------------------------------------------------------------ collection

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            marker = exercise_marker(item)
            if marker is None:
                continue
            path = Path(str(item.path))
            if self.secret is not None:
                _salt(item, self.secret, exercise_id_of(path))
            weight = item.get_closest_marker("weight")
            module = item.getparent(pytest.Module)
            doc = (module.obj.__doc__ or "") if module else ""
            meta = {
                "exercise": exercise_id_of(path),
                "points": float(marker.kwargs.get("points", marker.args[0] if marker.args else 0)),
                "title": syllabus.summary(doc),  # the whole first sentence
                "weight": float(weight.args[0]) if weight else 1.0,
                "hidden": item.get_closest_marker("hidden") is not None,
                "forbid": dict(marker.kwargs.get("forbid") or {}),  # for the static scan
                "markers": sorted(m.name for m in item.iter_markers()
                                  if m.name in ("cuda", "distributed", "hidden")),
            }
            item.stash[_facts] = meta
            item.user_properties.append((META, json.dumps(meta)))

    # ------------------------------------------------------------------ fixtures

    def impl(self, request: pytest.FixtureRequest) -> Implementation:
        """The submission's functions for this test module's exercise (see grader.contract.impl)."""
        marker = exercise_marker(request.node)
        if marker is None:
            raise pytest.UsageError(f"{request.node.nodeid}: 'impl' needs a module marked "
                                    "pytest.mark.exercise(points=...)")
        path = Path(str(request.node.path))
        root = submission_root(self.request, path)
        forbidden = Forbidden.from_marker(marker.kwargs.get("forbid"))
        mutates = marker.kwargs.get("mutates")
        if self.request.in_process:
            return Implementation(root, exercise_id_of(path), forbidden, mutates,
                                  call_timeout=self.request.limits.call_s, source=self.request.source(exercise_id_of(path)),
                                  timeouts=self._call_timeouts)
        from grader.sandbox.sandboxed_impl import SandboxedImplementation
        return SandboxedImplementation(root, exercise_id_of(path), forbidden,
                                       self._sandbox(root), mutates)

    def ref(self, request: pytest.FixtureRequest) -> ModuleType:
        """The reference solution's module for this test module's exercise."""
        path = Path(str(request.node.path))
        root = (self.request.reference or course_root(path) / "reference").resolve()
        key = (root, exercise_id_of(path))
        if key not in self._references:
            if not root.is_dir():
                raise pytest.UsageError(f"no reference solutions at {root}")
            self._references[key] = load_exercise(*key, namespace="torchdrill_reference")
        return self._references[key]

    # ------------------------------------------------------------------ running

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        meta = _meta(item)
        if meta is None:
            return
        drill = meta["exercise"]
        reason = _missing_requirement(item)  # first: hardware this machine lacks is never a zero
        if reason:
            item.stash[_not_run_reason] = reason
            pytest.skip(reason)
        cpu_left, wall_left = self._budget_left(item, drill)
        if cpu_left <= 0 or wall_left <= 0:
            assert self._budgets is not None  # _budget_left loaded them
            values = {"drill": drill, "budget": self._budgets.of(drill), "factor": time_budgets.FACTOR,
                      "margin": time_budgets.MARGIN}
            if self._budgets.source.get(drill) == "reference":
                raise TimedOut(Message("{drill} used up its grading budget ({budget:g} s, {factor:g} "
                                       "times the reference's time on these tests plus {margin:g} s): its "
                                       "remaining properties are not run", values))
            raise TimedOut(Message("{drill} used up its grading budget ({budget:g} s): its remaining "
                                   "properties are not run", values))
        broken = self._unloadable.get(drill)
        if broken is not None:  # the same error, at once: the file is not loaded again
            raise broken.again()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Any:
        meta = _meta(item)
        if meta is None:
            return (yield)
        drill = meta["exercise"]
        start = self._reading()
        assert start is not None  # a reading that may wait always comes
        clocks = _Clocks(item, start, self.request.limits.test_s, *self._budget_left(item, drill), self._reading)
        try:
            with profiles.at_most_the_profile(cast(pytest.Function, item).obj):
                return (yield)
        finally:
            clocks.stop()
            end = self._reading()
            assert end is not None
            item.stash[_charged] = end.charged_since(start)
            self._spent[drill] = self._spent.get(drill, 0.0) + item.stash[_charged]
            self._spent_wall[drill] = self._spent_wall.get(drill, 0.0) + end.wall - start.wall

    def _reading(self, wait: bool = True) -> clock.Reading | None:
        """The clocks a budget charges by (``grader.sandbox.clock``): this process, and the
        sandbox workers it asked for, as their zygote reads them from the kernel. None
        when ``wait`` is false and a zygote is busy (a clock's signal came mid-exchange)."""
        if self.request.in_process:
            return clock.reading()
        workers = zygote.workers_usage(wait)
        return None if workers is None else clock.reading(*workers)

    def _budget_left(self, item: pytest.Item, drill: str) -> tuple[float, float]:
        """(seconds to charge, wall seconds) left of ``drill``'s budget in this process
        (``grader.core.time_budgets``; what a second charges: ``grader.sandbox.clock``);
        wall time may reach ``WALL_ALLOWANCE`` times it, the backstop where the kernel
        keeps no run-queue delay."""
        if self._budgets is None:
            tests = {exercise_id_of(Path(str(i.path))): Path(str(i.path))
                     for i in item.session.items if exercise_marker(i) is not None}
            self._budgets = time_budgets.load(course_root(Path(str(item.path))) / "tests", tests,
                                                self.request.limits.drill_budget_s)
        budget = self._budgets.of(drill)
        return (budget - self._spent.get(drill, 0.0),
                budget * WALL_ALLOWANCE - self._spent_wall.get(drill, 0.0))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        if _meta(item) is None:
            return report
        exc = call.excinfo.value if call.excinfo is not None else None
        if isinstance(exc, SubmissionError) and call.when == "call":
            self._unloadable.setdefault(_meta(item)["exercise"], exc)  # type: ignore[index]
        if isinstance(exc, SandboxBroken):  # the controller stops the grading on this report
            report.user_properties.append((SANDBOX_BROKEN, str(exc)))
            return report
        if report.skipped:
            reason = item.stash.get(_not_run_reason, None)
            info: dict[str, Any] = ({"outcome": NOT_RUN, "message": reason, "message_id": Message(reason).to_json()}
                                    if reason else
                                    _skipped(exc))
        else:
            outcome, message, kept = verdict.classify(exc)
            expired = item.stash.get(_expired, None)
            if expired and outcome != PASSED:  # whatever hypothesis made of the interruption
                outcome, message, kept = TIMED_OUT, str(expired), expired
            changed = _changed_arguments(item) if outcome == PASSED and call.when == "call" else None
            if changed:
                outcome, message, kept = FAILED, str(changed), changed
            info = {"outcome": outcome, "message": message[:verdict.MAX_MESSAGE]}
            if kept is not None and len(str(kept)) <= verdict.MAX_MESSAGE:  # bounded like the text
                info["message_id"] = kept.to_json()
            if outcome in (FAILED, ERROR, TIMED_OUT) and exc is not None:
                info["counterexample"] = verdict.counterexample(
                    getattr(item, "funcargs", {}).get("impl"), exc)
            isolation = _isolation_used()
            if isolation:
                info["isolation"] = isolation
            if call.when == "call":  # later reports repeat earlier phases' output
                info["charged_s"] = item.stash.get(_charged, 0.0)
                for stream, text in (("stdout", report.capstdout), ("stderr", report.capstderr)):
                    if text:
                        info[stream] = verdict.capped(text)
        report.user_properties.append((OUTCOME, json.dumps(info)))
        if exc is not None and call.when == "call":
            _let_go(exc)
        return report


def _skipped(exc: BaseException | None) -> dict[str, Any]:
    """A test that pytest skipped though no requirement was missing: an error, not a pass."""
    said = Message("the test was skipped unexpectedly: {error}", {"error": str(exc)})
    return {"outcome": ERROR, "message": str(said), "message_id": said.to_json()}


def _let_go(exc: BaseException) -> None:
    """Clear the locals of the frames a test's exception holds (its answer among them), once
    its report is made: a failed test must not keep its answer alive for the rest of the
    grading (60 failed properties, each holding a 240 MiB answer, took a grader to 2.7 GB)."""
    seen: set[int] = set()
    chain: BaseException | None = exc
    while chain is not None and id(chain) not in seen:
        seen.add(id(chain))
        traceback.clear_frames(chain.__traceback__)
        chain = chain.__cause__ or chain.__context__


def _changed_arguments(item: pytest.Item) -> Message | None:
    """Why a property that passed is lost all the same: a call changed its arguments
    beyond what the drill's marker lets it (``mutates``). Every drill, every property:
    the caller's tensors are not the function's to change, whatever the property checks."""
    impl = getattr(item, "funcargs", {}).get("impl")
    changed = impl.changed_arguments() if isinstance(impl, Implementation) else []
    if not changed:
        return None
    return Message("the call {changes}; leave the arguments as they were given (work on a copy: x.clone(), "
                   "not an in-place change of x)", {"changes": LIST_SEPARATOR.join(changed[:3])})


def _salt(item: pytest.Item, secret: course_secret.Secret, drill: str) -> None:
    """Seed the item's hypothesis test from the secret (hypothesis prefers an explicit
    seed to ``derandomize``'s digest of the test's source). Every parametrization of a
    function shares its seed, as they share the digest in the public run."""
    test = getattr(item, "obj", None)
    if test is None or not getattr(test, "is_hypothesis_test", False):
        return
    test._hypothesis_internal_use_seed = secret.seed(f"{drill}::{test.__qualname__}")


def _drills_asked(config: pytest.Config) -> int | None:
    """How many drills this run grades, from its arguments: one test file per drill
    (None: a folder, the whole course)."""
    files = {str(arg).split("::", 1)[0] for arg in config.args}
    if not files or any(Path(f).is_dir() for f in files):
        return None
    return len(files)


def _missing_requirement(item: pytest.Item) -> str | None:
    if item.get_closest_marker("cuda"):
        import torch
        if not torch.cuda.is_available():
            return CUDA_REASON
    if item.get_closest_marker("distributed"):
        import torch.distributed as dist
        if not (dist.is_available() and dist.is_gloo_available()):
            return GLOO_REASON
    return None


class _Clocks:
    """Raise ``TimedOut`` in the test's (main) thread when its time is up: the per-test
    limit (wall time), the drill budget's wall allowance, and the drill budget itself,
    which charges what ``grader.sandbox.clock`` says. One real-time timer serves all
    three: since a charged second is at most a wall second of one thread's work, the
    timer is set for what is left of the budget (at most ``CHARGE_POLL_S``); when it
    fires, the charge so far is read and the timer set again for what is left, until
    nothing is. A clock that fired is noted on the item: whatever the test then ends in
    (hypothesis may report the interruption as flaky data generation), it is
    ``timed_out`` (``pytest_runtest_makereport``)."""

    def __init__(self, item: pytest.Item, start: clock.Reading, test_s: float, budget_left: float,
                 wall_left: float, read: Callable[[bool], clock.Reading | None]):
        self.item, self.start, self.read = item, start, read
        self.budget_left = budget_left
        self.armed = False
        per_test = test_s or math.inf  # 0: no limit per test; the budget holds
        if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
            return
        self.test_ends = start.wall + per_test
        self.wall_ends = start.wall + wall_left
        self.per_test = per_test
        self.previous = signal.signal(signal.SIGALRM, self._fired)
        self.armed = True
        outer_deadline(min(self.test_ends, self.wall_ends))
        self._set(min(budget_left, per_test, wall_left, CHARGE_POLL_S))

    def _set(self, seconds: float) -> None:
        signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.01))

    def _fired(self, signum: int, frame: FrameType | None) -> None:
        now = time.monotonic()
        if now >= self.test_ends - 0.005:
            self._expire(Message("the test ran past its {limit:g} s limit", {"limit": self.per_test}))
        if now >= self.wall_ends - 0.005:
            self._expire(BUDGET_RAN_OUT)
        reading = self.read(False)
        if reading is None:  # the signal came inside a zygote exchange: read a little later
            self._set(0.05)
            return
        left = self.budget_left - reading.charged_since(self.start)
        if left <= 0.005:
            self._expire(BUDGET_RAN_OUT)
        self._set(min(left, self.test_ends - now, self.wall_ends - now, CHARGE_POLL_S))

    def _expire(self, why: Message) -> None:
        self._set(1.0)  # again, in case the student swallows it
        self.item.stash[_expired] = why
        raise TimedOut(why)

    def stop(self) -> None:
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
            outer_deadline(None)
            self.armed = False


def _isolation_used() -> dict[str, Any] | None:
    """What confined this process's workers, once one has started (else None)."""
    sandboxes = sys.modules.get("grader.sandbox.sandboxes")
    return sandboxes.isolation_report() if sandboxes is not None else None
