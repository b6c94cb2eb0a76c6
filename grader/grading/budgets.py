"""The clocks of a grading: each test's limit, and its drill's budget.

``Budgets`` times every graded test's call: it stops a test past its per-test limit
(wall time) or past what is left of its drill's budget (``grader.core.time_budgets``),
charged by ``grader.sandbox.clock`` (this process and the sandbox workers it asked for),
and notes on the item what the call was charged (``CHARGED``) and why a clock stopped
it (``EXPIRED``), for the verdict (``grader.grading.judge``). A drill whose budget is
spent has its remaining properties timed out before they start (``refuse_spent``).
"""

from __future__ import annotations

import math
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any, cast

import pytest

from grader.contract.call import outer_deadline
from grader.core import time_budgets
from grader.core.i18n import Message
from grader.core.outcomes import TimedOut
from grader.core.syllabus import course_root
from grader.core.syllabus import exercise_id as exercise_id_of
from grader.grading import profiles
from grader.grading.drill_facts import exercise_marker, facts
from grader.grading.request import GradingRequest
from grader.sandbox import clock, zygote

EXPIRED = pytest.StashKey[Message]()  # why a clock stopped the test
CHARGED = pytest.StashKey[float]()  # what the test's call was charged against its drill's budget
# A drill's wall time may reach this many times its budget before it is stopped all the same:
# the backstop where the kernel keeps no run-queue delay (``grader.sandbox.clock``), so the
# budget charges CPU time only and a sleeping call uses none.
WALL_ALLOWANCE = 4.0
# How often a test's budget clock reads what has been charged so far when it cannot tell
# from the wall clock alone (ranks side by side charge their CPU, more than wall time).
CHARGE_POLL_S = 1.0
BUDGET_RAN_OUT = Message("the drill's grading budget ran out during this test")


class Budgets:
    """The call hook that times each graded test, and what each drill has spent."""

    def __init__(self, request: GradingRequest):
        self.request = request
        self._budgets: time_budgets.Budgets | None = None
        self._spent: dict[str, float] = {}  # drill id -> seconds its tests were charged in this process
        self._spent_wall: dict[str, float] = {}  # drill id -> wall seconds its tests ran in this process

    def refuse_spent(self, item: pytest.Item, drill: str) -> None:
        """Raise ``TimedOut`` before the test starts if ``drill`` has spent its budget."""
        cpu_left, wall_left = self._left(item, drill)
        if cpu_left > 0 and wall_left > 0:
            return
        assert self._budgets is not None  # _left loaded them
        values = {"drill": drill, "budget": self._budgets.of(drill), "factor": time_budgets.FACTOR,
                  "margin": time_budgets.MARGIN}
        if self._budgets.source.get(drill) == "reference":
            raise TimedOut(Message("{drill} used up its grading budget ({budget:g} s, {factor:g} "
                                   "times the reference's time on these tests plus {margin:g} s): its "
                                   "remaining properties are not run", values))
        raise TimedOut(Message("{drill} used up its grading budget ({budget:g} s): its remaining "
                               "properties are not run", values))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Any:
        meta = facts(item)
        if meta is None:
            return (yield)
        drill = meta["exercise"]
        start = self._reading()
        assert start is not None  # a reading that may wait always comes
        clocks = _Clocks(item, start, self.request.limits.test_s, *self._left(item, drill), self._reading)
        try:
            with profiles.at_most_the_profile(cast(pytest.Function, item).obj):
                return (yield)
        finally:
            clocks.stop()
            end = self._reading()
            assert end is not None
            item.stash[CHARGED] = end.charged_since(start)
            self._spent[drill] = self._spent.get(drill, 0.0) + item.stash[CHARGED]
            self._spent_wall[drill] = self._spent_wall.get(drill, 0.0) + end.wall - start.wall

    def _reading(self, wait: bool = True) -> clock.Reading | None:
        """The clocks a budget charges by (``grader.sandbox.clock``): this process, and the
        sandbox workers it asked for, as their zygote reads them from the kernel. None
        when ``wait`` is false and a zygote is busy (a clock's signal came mid-exchange)."""
        if self.request.in_process:
            return clock.reading()
        workers = zygote.workers_usage(wait)
        return None if workers is None else clock.reading(*workers)

    def _left(self, item: pytest.Item, drill: str) -> tuple[float, float]:
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
        self.item.stash[EXPIRED] = why
        raise TimedOut(why)

    def stop(self) -> None:
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
            outer_deadline(None)
            self.armed = False
