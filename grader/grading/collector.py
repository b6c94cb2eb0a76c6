"""Fold graded test reports into results; runs on the controller only.

Graded tests carry their exercise, points and weight (``META``) and their
outcome (``OUTCOME``) as ``report.user_properties``, which travel with reports
from xdist workers; the collector turns them into ``TestRecord``s and builds the
results when the session ends, which ``grader.grading.pipeline`` reads from it (a
pytest run given ``--results FILE`` also gets them written there, and the score
table printed). A session it stops (a broken sandbox, a crashed worker) leaves
``failure`` saying why.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, cast

import pytest

from grader.core import hints, results_json, syllabus, time_budgets
from grader.core.errors import GraderFailed
from grader.core.i18n import Message
from grader.core.outcomes import ERROR, PASSED
from grader.core.results_json import Results
from grader.core.syllabus import course_root
from grader.grading import scan
from grader.grading.request import GradingRequest
from grader.reports.table import render

META = "torchdrill.meta"
OUTCOME = "torchdrill.outcome"
SANDBOX_BROKEN = "torchdrill.sandbox_broken"  # report property: why (grader.sandbox.zygote.SandboxBroken)
SANDBOX_HELP = ("see `python -I -m grader.sandbox.confine` for this machine's layers; --sandbox-off LAYER "
                "or --isolation process grade without the failing one")


def submission_root(request: GradingRequest, test_path: Path) -> Path:
    """The folder graded: the request's, else ``exercises/`` beside the tests."""
    return (request.folder or course_root(test_path) / "exercises").resolve()


class ResultsCollector:
    """Folds graded test reports into results; registered on the controller only."""

    def __init__(self, config: pytest.Config, request: GradingRequest, examples: dict[str, Any] | None = None):
        """``examples``: what results.json says of the examples drawn (public, or a
        secret's digest)."""
        self.config = config
        self.request = request
        self.examples = examples or {"drawn": "public"}
        self.exercises: dict[str, results_json.ExerciseInfo] = {}
        self.tests: dict[str, results_json.TestRecord] = {}
        self.results: Results | None = None  # built when the session ends (None: no grading)
        self.failure: GraderFailed | None = None  # why the session was stopped without a grade
        self.tests_dir: Path | None = None
        self.isolation: dict[str, Any] | None = None
        # Tests whose verdict came: their call's report, or a setup that did not pass. A
        # record starts as passed at setup; one whose process died before the call's
        # report (os._exit under xdist) must not stay passed.
        self.finished: set[str] = set()
        self.crashed: list[str] = []  # tests whose xdist worker died while running them
        self.collected: set[str] = set()  # what the xdist workers collected (none without xdist)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        if SANDBOX_BROKEN in props:  # no score at all, rather than a zero for every test
            why = str(props[SANDBOX_BROKEN]) or "the sandbox could not start"
            self.failure = GraderFailed(f"{why} ({SANDBOX_HELP})")
            pytest.exit(why, returncode=self.failure.exit_code)
        if META not in props or OUTCOME not in props:
            record = self.tests.get(report.nodeid)
            if record is not None and report.failed:  # xdist's word that the test's process died
                self._died(record, report.longreprtext)
                self.crashed.append(report.nodeid)
            return
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self.finished.add(report.nodeid)
        # both are the JSON text GradingSession put there
        meta, info = json.loads(cast(str, props[META])), json.loads(cast(str, props[OUTCOME]))
        if info.get("isolation") and self.isolation is None:
            self.isolation = info["isolation"]
        eid = meta["exercise"]
        test_path = Path(self.config.rootpath, report.nodeid.split("::")[0])
        if eid not in self.exercises:
            self.exercises[eid] = results_json.ExerciseInfo(
                eid, meta["points"], meta["title"],
                static_flags=scan.flags_for(submission_root(self.request, test_path), eid,
                                            meta.get("forbid"), self.request.source(eid)))
        record = self.tests.get(report.nodeid)
        if record is None:
            record = self.tests[report.nodeid] = results_json.TestRecord(
                exercise=eid, name=report.nodeid.split("::", 1)[-1], outcome=PASSED,
                weight=meta["weight"], hidden=meta["hidden"], markers=meta["markers"])
        record.duration_s += report.duration
        record.charged_s += float(info.get("charged_s", 0.0))
        if self.tests_dir is None:
            self.tests_dir = course_root(test_path) / "tests"
        for stream in ("stdout", "stderr"):
            if info.get(stream):
                setattr(record, stream, getattr(record, stream) + info[stream])
        if record.outcome == PASSED and info["outcome"] != PASSED:
            record.outcome = info["outcome"]
            record.message = info.get("message", "")
            record.message_id = info.get("message_id")
            record.counterexample = info.get("counterexample")

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.collected.update(ids)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Any:
        """After the last test: a worker that died takes the rest of its file with it
        (xdist runs no more of it), and a drill scored on the properties that ran before
        the crash would count the others as never asked. No results then, and why."""
        done = yield
        started = {nodeid.split("::")[0] for nodeid in self.tests}
        never = sorted(i for i in self.collected - self.tests.keys() if i.split("::")[0] in started)
        if never:
            why = (f"{len(never)} test(s) never ran ({', '.join(never[:3])}{', ...' if len(never) > 3 else ''}): "
                   f"the process running {', '.join(dict.fromkeys(self.crashed)) or 'their file'} ended during "
                   "it (os._exit, a crash, a signal), and pytest-xdist ran no more of its file")
            self.failure = GraderFailed(f"{why} (--isolation sandbox keeps such a crash to the call it happened in)")
            pytest.exit(why, returncode=self.failure.exit_code)
        return done

    @staticmethod
    def _died(record: results_json.TestRecord, why: str) -> None:
        if record.outcome == PASSED:
            record.outcome = ERROR
            kept = Message("the process running this test ended during it (os._exit, a crash, a "
                           "signal), so it has no verdict: {error}", {"error": why.strip().splitlines()[-1][:300]})
            record.message, record.message_id = str(kept), kept.to_json()

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        path = self.request.results
        if exitstatus == pytest.ExitCode.INTERRUPTED or self.failure is not None:
            if path:  # a stopped session's partial results are no grade, nor is an older file
                Path(path).unlink(missing_ok=True)
            return
        if not self.tests:
            return
        for nodeid, record in self.tests.items():
            if nodeid not in self.finished:
                self._died(record, "its report never came")
        folder = self.request.folder
        submission = str(folder.resolve()) if folder else "exercises (default)"
        environment = {"torch": _torch_version(), "cuda_available": _cuda_available(),
                       "workers": getattr(self.config.option, "numprocesses", None) or 0,
                       "shrink": self.request.shrink,
                       "isolation": self.isolation or {"mode": self.request.isolation.value},
                       "examples": self.examples}
        if self.tests_dir is not None:  # the wall budgets the drills were graded under
            environment["budgets"] = time_budgets.load(
                self.tests_dir, {eid: syllabus.test_file(self.tests_dir.parent, eid) for eid in self.exercises},
                self.request.limits.drill_budget_s).as_json()
        suite = (results_json.suite_hash(self.tests_dir, self.examples.get("secret"))
                 if self.tests_dir else None)
        self.results = results_json.build(submission, self.exercises,
                                            list(self.tests.values()), environment, suite)
        if self.tests_dir is not None:  # course order, and the hints the learner used
            graded = folder.resolve() if folder else self.tests_dir.parent / "exercises"
            syllabus.annotate(self.results, self.tests_dir.parent, hints.revealed(graded))
        if path:
            results_json.write(self.results, Path(path))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.results is not None:
            text = io.StringIO()
            render(self.results, file=text)
            terminalreporter.ensure_newline()
            terminalreporter.write(text.getvalue())


def _torch_version() -> str:
    import torch
    return str(torch.__version__)


def _cuda_available() -> bool:
    import torch
    return bool(torch.cuda.is_available())
