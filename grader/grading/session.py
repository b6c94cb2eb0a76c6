"""What the grading plugin does in a run that grades (``grader.grading.plugin`` registers it).

It grades what its ``GradingRequest`` (``grader.grading.request``) asks, and reads
nothing else of the run's options. One plugin per concern, registered here, in the
order a test meets them:

- ``drill_facts.DrillFacts``: collection attaches each graded test's drill facts
  (exercise id, points, weight, markers) to the item, and seeds it in an official grading;
- ``sandboxing.SandboxLifecycle``: the sandbox's zygote, started early, shared with
  xdist's workers, closed at the end;
- ``budgets.Budgets``: a clock stops a test past its limit, or its drill's budget;
- ``judge.Judge``: the report of each phase, classified by what was raised
  (``grader.grading.verdict``), with outcome, message and counterexample;
- on the controller only, a ``ResultsCollector`` folds the reports into ``results.json``.

``GradingSession`` itself sets the run up (profile, secret, threads), sends the request
to xdist's workers, serves the ``impl`` and ``ref`` fixtures, and decides, before a test
starts, whether it runs: hardware first, then the drill's budget, then its file.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from grader.contract import examples
from grader.contract.forbid import Forbidden
from grader.contract.impl import Implementation
from grader.contract.loader import load_exercise
from grader.core.syllabus import course_root
from grader.core.syllabus import exercise_id as exercise_id_of
from grader.grading import profiles
from grader.grading.budgets import Budgets
from grader.grading.collector import ResultsCollector, submission_root
from grader.grading.drill_facts import DrillFacts, exercise_marker, facts
from grader.grading.judge import Judge
from grader.grading.pipeline import COLLECTOR
from grader.grading.request import WORKERINPUT_KEY, GradingRequest
from grader.grading.sandboxing import SandboxLifecycle


class GradingSession:
    """The grading plugin's hooks, registered only in a run that grades."""

    def __init__(self, config: pytest.Config, request: GradingRequest):
        import torch

        self.config = config
        self.request = request
        self._references: dict[tuple[Path, str], ModuleType] = {}
        self._call_timeouts: dict[tuple[str, str], int] = {}  # (drill, function) -> calls past the limit
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
        self.sandboxes = SandboxLifecycle(config, request)
        self.budgets = Budgets(request)
        self.judge = Judge()
        for name, plugin in (("facts", DrillFacts(self.secret)), ("sandbox", self.sandboxes),
                             ("budgets", self.budgets), ("judge", self.judge)):
            config.pluginmanager.register(plugin, f"torchdrill-{name}")
        if not hasattr(config, "workerinput"):  # controller (or no xdist): collect results
            drawn = ({"drawn": "secret", "secret": self.secret.digest, "widened": examples.FACTOR}
                     if self.secret is not None else {"drawn": "public"})
            config.pluginmanager.register(ResultsCollector(config, request, drawn), COLLECTOR)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # After every pytest_configure, so after hypothesis' own plugin has loaded the
        # profile named by --hypothesis-profile: shrinking is switched off on top of it.
        if not self.request.shrink:
            profiles.without_shrinking()

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """pytest-xdist's controller, before each worker starts: the request travels to
        the worker (pytest passes plugin objects to no worker)."""
        node.workerinput[WORKERINPUT_KEY] = self.request.to_json()

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
                                       self.sandboxes.sandbox(root), mutates)

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
        meta = facts(item)
        if meta is None:
            return
        self.judge.skip_if_not_runnable(item)  # first: hardware this machine lacks is never a zero
        self.budgets.refuse_spent(item, meta["exercise"])
        self.judge.refuse_unloadable(meta["exercise"])
