"""``torchdrill``: the command line.

``torchdrill grade [SUBMISSION]`` runs the course's property tests against a
submission folder (pytest in this process, the plugin in ``grader.plugin``), shows
progress, writes ``DIR/results.json`` and prints the score table. It exits 0
whenever grading itself worked, whatever the score.
"""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

import grader
from grader import report as report_module
from grader import results as results_module
from grader import table, zygote

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_GRADER_FAILED = 3


class UsageError(Exception):
    """A problem with what the user asked for; printed as one clear sentence."""


# ------------------------------------------------------------------ course layout

def find_course(start: Path) -> Path:
    """The nearest folder at or above ``start`` holding ``tests/conftest.py``."""
    for folder in (start, *start.parents):
        if (folder / "tests" / "conftest.py").is_file():
            return folder
    raise UsageError(f"no torchdrill course at {start} or above: expected a tests/ folder "
                     "with conftest.py (run inside the torchdrill checkout, or pass --course DIR)")


def exercise_tests(course: Path) -> dict[str, Path]:
    """Exercise id -> its test module, learned from the files (no list to keep)."""
    tests = course / "tests"
    found = {}
    for path in sorted(tests.rglob("test_*.py")):
        rel = path.relative_to(tests)
        found["/".join((*rel.parts[:-1], path.stem.removeprefix("test_")))] = path
    return found


def resolve_submission(course: Path, given: str) -> Path:
    """The folder to grade; a student's handout folder is graded through its exercises/."""
    from grader.course import submission_folder

    for candidate in (Path(given), course / given):
        if candidate.is_dir():
            return submission_folder(candidate.resolve())
    if Path(given).exists():
        raise UsageError(f"submission {given} is not a folder: give a folder laid out like exercises/")
    raise UsageError(f"submission folder {given} does not exist (looked in {Path.cwd()} and {course})")


# ------------------------------------------------------------------ grading

class _GraderErrors:
    """A pytest plugin that keeps the grader's own problems: collection errors (a broken
    test file) and why the session was stopped early (``pytest.exit``'s message)."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.stopped = ""

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.errors.append(f"{report.nodeid}: {report.longreprtext}")

    def pytest_keyboard_interrupt(self, excinfo) -> None:  # pytest calls it for pytest.exit too
        self.stopped = str(getattr(excinfo.value, "msg", "") or "")


class _Progress:
    """A pytest plugin that drives a rich progress bar."""

    def __init__(self, progress: Progress | None):
        self.progress = progress
        self.task = None

    def pytest_collection_finish(self, session) -> None:
        if self.progress is not None and session.items:  # the xdist controller collects nothing
            self.task = self.progress.add_task("grading", total=len(session.items))

    def pytest_xdist_node_collection_finished(self, node, ids) -> None:
        if self.progress is not None and self.task is None:
            self.task = self.progress.add_task("grading", total=len(ids))

    def pytest_runtest_logreport(self, report) -> None:
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
          extra_args: list[str] | None = None) -> dict[str, Any]:
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
                plugins: list[object] = ()) -> dict[str, Any]:
    """Run pytest with the grading plugin in this process; return the results it wrote.

    ``args`` name the test files and any options beyond the ones every grading
    needs. Raises ``GraderFailed`` (``GradingInterrupted`` on Ctrl-C) when pytest
    could not grade.
    """
    import pytest  # here, not at the top: ``grade`` starts the sandbox's zygote before torch loads

    results_path.unlink(missing_ok=True)  # only this run's results may be read back
    freeze_heavy_imports()
    errors = _GraderErrors()
    code = pytest.main([*args, "--rootdir", str(course), "-p", "no:terminal",
                        "-p", "no:cacheprovider", "--submission", str(submission),
                        "--results", str(results_path)], plugins=[errors, *plugins])
    failure = _grading_failure(code, errors, results_path)
    if failure is not None:
        results_path.unlink(missing_ok=True)  # a stopped session's partial results are no grade
        raise failure
    return results_module.read(results_path)


def _grading_failure(code: int, errors: _GraderErrors, results_path: Path) -> GraderFailed | None:
    """Why pytest's session is not a grading (None when it is one)."""
    import pytest

    from grader.plugin import SANDBOX_FAILED

    if code == pytest.ExitCode.INTERRUPTED:
        return GradingInterrupted(f"pytest stopped with exit code {int(code)} before writing results")
    if errors.errors:
        return GraderFailed("the tests could not be collected:\n" + "\n".join(errors.errors))
    if code == SANDBOX_FAILED:
        return GraderFailed(f"{errors.stopped or 'the sandbox could not start'} (see `python -I -m "
                            "grader.confine` for this machine's layers; --sandbox-off LAYER or "
                            "--isolation process grade without the failing one)")
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) or not results_path.exists():
        return GraderFailed(f"pytest stopped with exit code {int(code)} before writing results")
    return None


class GraderFailed(Exception):
    """Grading itself did not work (not a low score: the grader could not grade)."""


class GradingInterrupted(GraderFailed):
    """Ctrl-C stopped pytest before it finished grading."""


# ------------------------------------------------------------------ commands

def cmd_grade(args: argparse.Namespace) -> int:
    course = Path(args.course).resolve() if args.course else find_course(Path.cwd())
    submission = resolve_submission(course, args.submission)
    out = Path(args.out) if args.out else course / "reports"
    _templates(course)  # a missing template is reported now, not after grading
    mode = isolation(args.isolation, course, submission)
    if not args.workers:  # pytest runs here: its zygote imports torch while this process does
        zygote.start_early(mode, args.sandbox_off or ())
    extra = grading_options(args, mode)
    results = grade(course, submission, out.resolve(), only=args.only, workers=args.workers,
                    profile=args.profile, extra_args=extra)
    table.render(results, verbose=args.verbose)
    print(f"isolation: {isolation_summary(results)}")
    print(f"results: {out / 'results.json'}")
    _publish(results, out, course, args)
    return EXIT_OK


def grading_options(args: argparse.Namespace, isolation: str) -> list[str]:
    """The plugin's options for what ``add_grading_options`` parsed."""
    extra = ["--isolation", isolation]
    extra += [f"--sandbox-off={layer}" for layer in args.sandbox_off or []]
    if args.call_timeout is not None:
        extra += ["--call-timeout", str(args.call_timeout)]
    if args.test_timeout is not None:
        extra += ["--test-timeout", str(args.test_timeout)]
    if args.no_shrink:
        extra.append("--no-shrink")
    return extra


def isolation(given: str, course: Path, submission: Path) -> str:
    """``auto``: in-process for the course's own exercises/ and reference/ (a learner's
    own work, the instructor's solutions), the sandbox for anything else."""
    if given != "auto":
        return given
    own = {(course / "exercises").resolve(), (course / "reference").resolve()}
    return "none" if submission.resolve() in own else "sandbox"


def isolation_summary(results: dict[str, Any]) -> str:
    """``sandbox (every layer)`` / ``sandbox; missing: uid (off: unavailable: ...)``."""
    isolation = (results.get("environment") or {}).get("isolation") or {}
    mode = isolation.get("mode", "none")
    layers = isolation.get("layers") or {}
    missing = [f"{name} ({layers.get(name, '?')})" for name in isolation.get("missing") or []]
    if mode == "sandbox" and not missing:
        return "sandbox (every layer: " + ", ".join(layers) + ")"
    if mode == "none":
        return "none (the submission ran inside the grader)"
    return f"{mode}; missing: " + "; ".join(missing)


def cmd_report(args: argparse.Namespace) -> int:
    """Re-render the report (and exports) from a results.json, without grading."""
    path = Path(args.results)
    try:
        results = results_module.read(path)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    out = Path(args.out) if args.out else path.parent
    course = _report_course(args, path)
    table.render(results, verbose=args.verbose)
    _publish(results, out, course, args)
    return EXIT_OK


def _report_course(args: argparse.Namespace, results_path: Path) -> Path:
    """--course, else the course around the current folder, else around the results."""
    if args.course:
        return Path(args.course).resolve()
    try:
        return find_course(Path.cwd())
    except UsageError as not_here:
        try:
            return find_course(results_path.resolve().parent)
        except UsageError:
            raise not_here from None


def _templates(course: Path) -> Path:
    try:
        return report_module.templates_dir(course)
    except report_module.ReportError as exc:
        raise UsageError(str(exc)) from None


def _publish(results: dict[str, Any], out: Path, course: Path, args: argparse.Namespace) -> None:
    """Write index.html, and the exports asked for; print where each went."""
    _templates(course)
    print(f"report: {report_module.write_report(results, out, course)}")
    if "gradescope" in (args.format or []):
        from grader import exports
        print(f"gradescope: {exports.write_gradescope(results, out)}")
    if args.junit:
        from grader import exports
        print(f"junit: {exports.write_junit(results, Path(args.junit))}")


def add_grading_options(p: argparse.ArgumentParser, isolation_default: str,
                        isolation_help: str) -> None:
    """The options ``grade`` and ``grade-all`` share: how tests run, where code runs."""
    p.add_argument("--profile", choices=["torchdrill", "torchdrill-quick"], default=None,
                   help="hypothesis profile (default torchdrill: 100 examples per property)")
    p.add_argument("--no-shrink", action="store_true",
                   help="skip shrinking failures: the same scores, sooner, but counterexamples "
                        "are the first failing inputs found, not the smallest")
    p.add_argument("--course", metavar="DIR", help="course folder holding tests/ (default: found "
                                                   "from the current folder upwards)")
    choices = ["none", "process", "sandbox"] + (["auto"] if isolation_default == "auto" else [])
    p.add_argument("--isolation", choices=choices, default=isolation_default, help=isolation_help)
    p.add_argument("--sandbox-off", action="append", metavar="LAYER",
                   choices=["bwrap", "uid", "landlock", "seccomp", "rlimits"],
                   help="switch one confinement layer off (repeatable; also the environment "
                        "variable TORCHDRILL_SANDBOX_OFF=bwrap,landlock); results.json and the "
                        "report say which layers ran")
    p.add_argument("--call-timeout", type=float, metavar="SECONDS",
                   help="wall-clock limit per call of the submission's code in a worker "
                        "(default 10); after 2 timeouts a function's remaining tests are "
                        "'timed out' without calling it")
    p.add_argument("--test-timeout", type=float, metavar="SECONDS",
                   help="wall-clock limit per test (default 120)")


def _add_output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", action="append", choices=["html", "gradescope"],
                   help="also write this format (repeatable): gradescope writes "
                        "DIR/gradescope/results.json; html (DIR/index.html) is always written")
    p.add_argument("--junit", metavar="FILE", help="also write JUnit XML to FILE (for CI dashboards)")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="print every failing property's counterexample under the table")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torchdrill",
        description="PyTorch drills graded by property tests: grade a submission, "
                    "see the score of every property and the smallest input that breaks it.")
    parser.add_argument("--version", action="version", version=f"torchdrill {grader.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    g = sub.add_parser("grade", help="grade one submission folder",
                       description="Grade one submission: a folder laid out like exercises/. "
                                   "Exits 0 whenever grading worked, whatever the score.")
    g.add_argument("submission", nargs="?", default="exercises",
                   help="folder to grade (default: exercises; 'reference' grades the reference)")
    g.add_argument("--out", metavar="DIR", help="where results.json goes (default: reports/)")
    g.add_argument("--only", nargs="+", metavar="EXERCISE_ID",
                   help="grade only these exercises, e.g. tensors/one_hot")
    g.add_argument("-n", "--workers", type=int, default=0, metavar="N",
                   help="spread the tests over N processes (pytest-xdist; default 0: this process)")
    add_grading_options(g, isolation_default="auto", isolation_help=(
        "where the submission's code runs. sandbox: a confined worker process per exercise "
        "(namespaces, dropped uid, Landlock, seccomp, rlimits: for other people's code); "
        "process: a clean worker process, unconfined; none: in the grader (fast to debug; "
        "your own code only). auto (default): none for this course's exercises/ and "
        "reference/, sandbox for any other folder"))
    _add_output_options(g)
    g.set_defaults(run=cmd_grade)

    r = sub.add_parser("report", help="re-render the report from a results.json (no grading)",
                       description="Re-render DIR/index.html (and exports) from a results.json "
                                   "written by 'torchdrill grade', without grading again.")
    r.add_argument("results", metavar="RESULTS_JSON", help="a results.json written by 'grade'")
    r.add_argument("--out", metavar="DIR", help="where index.html goes (default: beside RESULTS_JSON)")
    r.add_argument("--course", metavar="DIR", help="course folder holding report_templates/ "
                                                   "(default: found from the current folder upwards)")
    _add_output_options(r)
    r.set_defaults(run=cmd_report)

    from grader import classgrade, learn, release  # learner's commands; instructor's
    learn.register(sub)
    release.register(sub)
    classgrade.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except UsageError as exc:
        print(f"torchdrill: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except GraderFailed as exc:
        print(f"torchdrill: grading failed: {exc}", file=sys.stderr)
        return EXIT_GRADER_FAILED
