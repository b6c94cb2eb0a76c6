"""One grading: pytest with the grading plugin, run in this process.

``grade`` is what ``torchdrill grade`` does (with a progress bar); ``run_grading``
is the one way every command grades (``grade``, ``check``, ``grade-all``'s
grading processes): it runs pytest and returns the results it wrote, or raises
``GraderFailed`` when pytest could not grade.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from grader.core import results as results_module
from grader.core.course import exercise_tests
from grader.core.errors import UsageError
from grader.core.results import Results

# Our exit codes for pytest (its own are 0-5): the sandbox failed; some tests have no
# verdict (the process running them died, and xdist ran no more of their file).
SANDBOX_FAILED = 13
GRADING_INCOMPLETE = 14


class GraderFailed(Exception):
    """Grading itself did not work (not a low score: the grader could not grade)."""


class GradingInterrupted(GraderFailed):
    """Ctrl-C stopped pytest before it finished grading."""


class _GraderErrors:
    """A pytest plugin that keeps the grader's own problems: collection errors (a broken
    test file) and why the session was stopped early (``pytest.exit``'s message)."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.stopped = ""

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.errors.append(f"{report.nodeid}: {report.longreprtext}")

    def pytest_keyboard_interrupt(self, excinfo: Any) -> None:  # pytest calls it for pytest.exit too
        self.stopped = str(getattr(excinfo.value, "msg", "") or "")


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
    and pytest's session end collects too. Frozen objects are skipped. Measured
    on one_hot: 1.1 s of a 3.2 s check. Done once: the modules stay loaded.
    """
    global _heap_frozen
    if not _heap_frozen:
        import hypothesis  # noqa: F401
        import torch  # noqa: F401

        gc.freeze()
        _heap_frozen = True


def grade(course: Path, submission: Path, out: Path, only: list[str] | None = None,
          workers: int = 0, profile: str | None = None, show_progress: bool = True,
          extra_args: list[str] | None = None) -> Results:
    """Grade ``submission`` with ``course``'s tests; write and return results."""
    results_path = out / "results.json"
    args = grading_args(course, only, workers, profile, extra_args)
    console = Console(stderr=True)
    use_bar = show_progress and console.is_terminal
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=True,
                  disable=not use_bar) as progress:
        return run_grading(course, submission, results_path, args,
                           plugins=[_Progress(progress if use_bar else None)])


def grading_args(course: Path, only: list[str] | None = None, workers: int = 0,
                 profile: str | None = None, extra_args: list[str] | None = None) -> list[str]:
    """pytest's arguments for grading with ``course``'s tests (every drill, or ``only``)."""
    available = exercise_tests(course)
    unknown = [e for e in (only or []) if e not in available]
    if unknown:
        raise UsageError(f"unknown exercise {', '.join(unknown)}; known: {', '.join(available)}")
    targets = [str(available[e]) for e in only] if only else [str(course / "tests")]
    args = [*targets, "-n", str(workers), *(extra_args or [])]
    if workers:
        # A drill's tests share one worker: each worker then pays only its own drills'
        # one-time costs (gloo forkserver, optimizer imports). Measured on the reference
        # with -n 2: 12.3 s with loadfile, 15.7 s with the default test-by-test load.
        args += ["--dist", "loadfile"]
    if profile:
        args += ["--hypothesis-profile", profile]
    return args


def run_grading(course: Path, submission: Path, results_path: Path, args: list[str],
                plugins: list[object] | tuple[object, ...] = ()) -> Results:
    """Run pytest with the grading plugin in this process; return the results it wrote.

    ``args`` name the test files and any options beyond the ones every grading
    needs. Raises ``GraderFailed`` (``GradingInterrupted`` on Ctrl-C) when pytest
    could not grade.
    """
    import pytest  # here, not at the top: ``grade`` starts the sandbox's zygote before torch loads

    # pytest writes a file of its own; only a finished grading replaces ``results_path``, so a
    # stopped one (Ctrl-C, a broken sandbox) leaves the learner's last results as they were.
    results_path.parent.mkdir(parents=True, exist_ok=True)
    partial = results_path.with_name(f".{results_path.name}.{os.getpid()}.partial")
    partial.unlink(missing_ok=True)
    freeze_heavy_imports()
    errors = _GraderErrors()
    try:
        code = pytest.main([*args, "--rootdir", str(course), "-p", "no:terminal",
                            "-p", "no:cacheprovider", "--submission", str(submission),
                            "--results", str(partial)], plugins=[errors, *plugins])
        failure = _grading_failure(int(code), errors, partial)
        if failure is not None:
            raise failure
        results = results_module.read(partial)
        os.replace(partial, results_path)
        return results
    finally:
        partial.unlink(missing_ok=True)


def _grading_failure(code: int, errors: _GraderErrors, results_path: Path) -> GraderFailed | None:
    """Why pytest's session is not a grading (None when it is one)."""
    import pytest

    if code == pytest.ExitCode.INTERRUPTED:
        return GradingInterrupted("interrupted before the grading finished: nothing was recorded, "
                                  "the last results and report are as they were")
    if errors.errors:
        return GraderFailed("the tests could not be collected:\n" + "\n".join(errors.errors))
    if code == GRADING_INCOMPLETE:
        return GraderFailed(f"{errors.stopped} (--isolation sandbox keeps such a crash to the call "
                            "it happened in)")
    if code == SANDBOX_FAILED:
        return GraderFailed(f"{errors.stopped or 'the sandbox could not start'} (see `python -I -m "
                            "grader.sandbox.confine` for this machine's layers; --sandbox-off LAYER "
                            "or --isolation process grade without the failing one)")
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) or not results_path.exists():
        return GraderFailed(f"pytest stopped with exit code {code} before writing results")
    return None


def isolation(given: str, course: Path, submission: Path) -> str:
    """``auto``: in-process for the course's own exercises/ and reference/ (a learner's
    own work, the instructor's solutions), the sandbox for anything else."""
    if given != "auto":
        return given
    own = {(course / "exercises").resolve(), (course / "reference").resolve()}
    return "none" if submission.resolve() in own else "sandbox"
