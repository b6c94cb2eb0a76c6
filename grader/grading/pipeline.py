"""One grading: a ``Submission`` graded by pytest with the grading plugin, in this
process, into ``Results`` in memory.

Every front door builds one ``GradingRequest`` (``grader.grading.request``). The
stages, in order:

1. ``grade`` lays the submission out as a folder
   (``grader.intake.submission.materialized``);
2. ``run`` runs pytest on it with the request as a plugin object (``check`` enters
   here, on the learner's own folder): the grading plugin's session
   (``grader.grading.session``) registers one plugin per concern, which find each
   property's drill facts, sandbox, time and judge it, and its
   collector (``grader.grading.collector``) assembles the results;
3. ``grade`` makes the results name the submission as handed in
   (``grader.intake.submission.finish``).

Each raises ``GraderFailed`` (``GradingInterrupted`` on Ctrl-C) when pytest could not
grade. Writing results.json is the command's job, once, after a finished grading:
a stopped one leaves the learner's last results as they were.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from grader.core.errors import GraderFailed, GradingInterrupted, UsageError
from grader.core.isolation import AUTO, Isolation
from grader.core.results_json import Results
from grader.core.syllabus import exercise_tests
from grader.grading.request import GradingRequest, RequestPlugin
from grader.intake.submission import Submission, finish, materialized

COLLECTOR = "torchdrill-collector"  # the name the grading session registers its collector under


class _GraderErrors:
    """A pytest plugin that keeps what the session says of itself: collection errors (a
    broken test file), and the collector with the results it built or why it stopped."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.collector: Any = None

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.errors.append(f"{report.nodeid}: {report.longreprtext}")

    def pytest_unconfigure(self, config: Any) -> None:
        """After the session: keep what the collector built (results, or why none)."""
        self.collector = config.pluginmanager.get_plugin(COLLECTOR)


class _Progress:
    """A pytest plugin that drives a rich progress bar."""

    def __init__(self, progress: Progress | None):
        self.progress = progress
        self.task: Any = None

    def pytest_collection_finish(self, session: Any) -> None:
        if self.progress is not None and session.items:  # the xdist controller collects nothing
            self.task = self.progress.add_task("grading", total=len(session.items))

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if self.progress is not None and self.task is None:
            self.task = self.progress.add_task("grading", total=len(ids))

    def pytest_runtest_logreport(self, report: Any) -> None:
        if self.progress is not None and self.task is not None and report.when == "teardown":
            self.progress.advance(self.task)


_heap_frozen = False


def freeze_heavy_imports() -> None:
    """Import torch and hypothesis now and ``gc.freeze()`` what they made.

    Every full garbage collection walks every object torch created: hypothesis
    runs ``gc.collect()`` when it registers a random generator (twice a session)
    and pytest's session end collects too: together a large part of a quick check.
    Frozen objects are skipped. Done once: the modules stay loaded.
    """
    global _heap_frozen
    if not _heap_frozen:
        import hypothesis  # noqa: F401
        import torch  # noqa: F401

        gc.freeze()
        _heap_frozen = True


def grade(request: GradingRequest, submission: Submission, *, plugins: Sequence[object] = (),
          show_progress: bool = False, work: Path | None = None,
          after: Callable[[Path], None] | None = None) -> Results:
    """Grade ``submission`` as ``request`` asks; the results, in memory. ``work``: where a
    submission that is not a folder on disk is laid out; ``after``: called with the graded
    folder once pytest is done (still there)."""
    with materialized(submission, work) as folder:
        try:
            console = Console(stderr=True)
            use_bar = show_progress and console.is_terminal
            with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), console=console, transient=True,
                          disable=not use_bar) as progress:
                results = run(request.at(folder, submission.files), plugins=[_Progress(progress if use_bar else None), *plugins])
        finally:
            if after is not None:
                after(folder)
        return finish(results, submission, folder)


def check_only(course: Path, only: Sequence[str] | None) -> dict[str, Path]:
    """The course's drills and their test files; ``UsageError`` naming any drill of
    ``only`` the course does not have (a front door asks before it grades)."""
    available = exercise_tests(course)
    unknown = [e for e in (only or []) if e not in available]
    if unknown:
        raise UsageError(f"unknown exercise {', '.join(unknown)}; known: {', '.join(available)}")
    return available


def run(request: GradingRequest, plugins: Sequence[object] = (), pytest_args: Sequence[str] = ()) -> Results:
    """Run pytest with the grading plugin on ``request.folder`` in this process: the
    request reaches the plugin as an object (``RequestPlugin``); pytest's command line
    holds only what pytest itself reads: the test files, the workers, the ``-m``
    selection and ``pytest_args`` (capture, plugins off)."""
    assert request.course is not None and request.folder is not None
    available = check_only(request.course, request.only)
    targets = [str(available[e]) for e in request.only] if request.only else [str(request.course / "tests")]
    args = [*targets, *pytest_args]
    if request.workers:
        # A drill's tests share one worker: each worker then pays only its own drills'
        # one-time costs (gloo forkserver, optimizer imports).
        args += ["-n", str(request.workers), "--dist", "loadfile"]
    if request.marker:
        args += ["-m", request.marker]
    return _pytest(request.course, args, [RequestPlugin(request), *plugins])


def grade_folder(course: Path, folder: Path, args: list[str], plugins: Sequence[object] = ()) -> Results:
    """Grade ``folder`` from a pytest command line (``args``: the test files and the grading
    plugin's options, as a direct ``pytest`` run gives them): the engine's own tests use it
    to drive the plugin's command-line side."""
    return _pytest(course, [*args, "--submission", str(folder)], plugins)


def _pytest(course: Path, args: list[str], plugins: Sequence[object]) -> Results:
    """pytest with the grading plugin, in this process; the results the collector built.
    Raises ``GraderFailed`` (``GradingInterrupted`` on Ctrl-C) when pytest could not grade."""
    import pytest  # here, not at the top: ``grade`` starts the sandbox's zygote before torch loads

    freeze_heavy_imports()
    errors = _GraderErrors()
    code = pytest.main([*args, "--rootdir", str(course), *_plugins(args)], plugins=[errors, *plugins])
    collector = errors.collector
    failure = _grading_failure(int(code), errors, collector)
    if failure is not None:
        raise failure
    return collector.results


def _plugins(args: Sequence[str]) -> list[str]:
    """pytest's plugins for a grading: the grader's, hypothesis's and xdist's (unless ``args``
    turn it off), named, and no other installed one: what is installed beside the grader
    (pytest-cov, pytest-randomly) does not change a grade, and pytest does not read every
    installed distribution to find its plugins. xdist's workers are started with these
    arguments too. Off: the terminal (the grader reports), the cache, and
    unraisableexception, whose two full garbage collections a session are a large part of a
    small grading's cost, for warnings no verdict reads."""
    named = ["grader.grading.plugin", "_hypothesis_pytestplugin"]
    if "no:xdist" not in args:
        named.append("xdist.plugin")
    off = ["no:terminal", "no:cacheprovider", "no:unraisableexception"]
    return ["--disable-plugin-autoload", *(arg for name in [*named, *off] for arg in ("-p", name))]


def _grading_failure(code: int, errors: _GraderErrors, collector: Any) -> GraderFailed | None:
    """Why pytest's session is not a grading (None when it is one)."""
    import pytest

    if collector is not None and collector.failure is not None:  # the grading plugin stopped it
        return collector.failure
    if code == pytest.ExitCode.INTERRUPTED:
        return GradingInterrupted("interrupted before the grading finished: nothing was recorded, "
                                  "the last results and report are as they were")
    if errors.errors:
        return GraderFailed("the tests could not be collected:\n" + "\n".join(errors.errors))
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) or collector is None \
            or collector.results is None:
        return GraderFailed(f"pytest stopped with exit code {code} before the grading finished")
    return None


def isolation(given: str, course: Path, submission: Submission) -> Isolation:
    """``auto``: in-process for the course's own exercises/ and reference/ folders (a
    learner's own work, the instructor's solutions), the sandbox for anything else."""
    if given != AUTO:
        return Isolation(given)
    own = {(course / "exercises").resolve(), (course / "reference").resolve()}
    return Isolation.NONE if submission.folder in own else Isolation.SANDBOX
