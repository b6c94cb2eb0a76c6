"""The grading pytest plugin: markers, the ``impl``/``ref`` fixtures, outcomes, results.

Loaded by the ``pytest11`` entry point wherever torchdrill is installed. It does
nothing to tests without an ``exercise`` marker. For graded tests:

- collection attaches exercise id, points, weight and markers to
  ``item.user_properties`` (they travel with reports from xdist workers);
- a ``makereport`` wrapper classifies each phase by what was raised
  (``grader.outcomes``) and attaches outcome, message and counterexample;
- on the controller only, a collector folds the reports into ``results.json``.
"""

from __future__ import annotations

import io
import json
import re
import signal
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings

from grader import results as results_module
from grader import scan
from grader.expect import Mismatch
from grader.forbid import Forbidden
from grader.impl import Implementation
from grader.loader import load_exercise
from grader.outcomes import (ERROR, FAILED, NOT_ATTEMPTED, NOT_RUN, PASSED, TIMED_OUT,
                             BrokenContract, NotAttempted, StudentError, SubmissionError, TimedOut)
from grader.table import render
from grader.zygote import SandboxBroken

# One fixed profile for grading: same submission, same examples, same score.
settings.register_profile(
    "torchdrill",
    derandomize=True, database=None, deadline=None, print_blob=False,
    max_examples=100, report_multiple_bugs=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                           HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
settings.register_profile("torchdrill-quick", parent=settings.get_profile("torchdrill"),
                          max_examples=25)
settings.load_profile("torchdrill")


def _pin_hypothesis_constants() -> None:
    """Stop hypothesis drawing constants from whatever local modules are loaded.

    hypothesis (6.13x and later) mixes literals found in every loaded non-test,
    non-site-packages module into its draws. Which modules those are depends on
    the process's history (which drills and submissions it imported before), so
    a serial run and an xdist run shrank to different counterexamples, and a
    student's own literals could steer the inputs. An empty pool keeps the
    examples a function of the test and the hypothesis version alone.
    """
    from hypothesis.internal.conjecture import providers

    empty = providers.Constants()
    providers._get_local_constants = lambda: empty


_pin_hypothesis_constants()

META = "torchdrill.meta"
OUTCOME = "torchdrill.outcome"
MAX_MESSAGE = 4000
SANDBOX_FAILED = 13  # our exit code for pytest when the sandbox failed (pytest uses 0-5)
SANDBOX_BROKEN = "torchdrill.sandbox_broken"  # report property: why (grader.zygote.SandboxBroken)
MAX_OUTPUT = 2000  # characters of captured stdout/stderr kept per test
_not_run_reason = pytest.StashKey[str]()
_collector_key = pytest.StashKey["ResultsCollector"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("torchdrill", "torchdrill grading")
    group.addoption("--submission", metavar="DIR", default=None,
                    help="folder laid out like exercises/ to grade (default: exercises/ "
                         "beside the tests folder)")
    group.addoption("--reference-dir", metavar="DIR", default=None,
                    help="the reference solutions (default: reference/ beside the tests folder)")
    group.addoption("--results", metavar="FILE", default=None,
                    help="write the grading results (JSON) to FILE")
    group.addoption("--test-timeout", metavar="SECONDS", type=float, default=120.0,
                    help="wall-clock limit per test; past it the test is 'timed out' (default 120)")
    group.addoption("--isolation", choices=("none", "process", "sandbox"), default="none",
                    help="where student code runs: none (in this process: a learner's own work, "
                         "debugging), process (a clean worker process per exercise), sandbox "
                         "(that process confined: namespaces, uid, Landlock, seccomp, rlimits)")
    group.addoption("--sandbox-off", action="append", default=[], metavar="LAYER",
                    help="switch one confinement layer off (repeatable): bwrap, uid, landlock, "
                         "seccomp, rlimits; also TORCHDRILL_SANDBOX_OFF=bwrap,landlock")
    group.addoption("--call-timeout", metavar="SECONDS", type=float, default=10.0,
                    help="wall-clock limit per call of student code in a worker; after 2 such "
                         "timeouts a function is not called again (default 10)")
    group.addoption("--no-shrink", action="store_true", default=False,
                    help="skip hypothesis' shrinking: the same score, sooner, but each "
                         "counterexample is the first failing input found, not the smallest")


def pytest_configure(config: pytest.Config) -> None:
    import torch

    # Drill tensors are tiny: extra intra-op threads only fight over the cores.
    # Measured on a busy 2-core machine: a float64 softmax of 100 elements took
    # ~3 ms instead of ~5 us, BCE-with-logits 3.4 ms instead of 0.01 ms.
    torch.set_num_threads(1)
    config.addinivalue_line("markers", "exercise(points, forbid=None, id=None): a graded drill "
                            "(module marker): its points and forbidden APIs")
    config.addinivalue_line("markers", "weight(n): this property's share of the drill's points")
    config.addinivalue_line("markers", "cuda: needs a CUDA device; 'not run here' elsewhere")
    config.addinivalue_line("markers", "distributed: runs real torch.distributed (gloo) ranks")
    config.addinivalue_line("markers", "hidden: not shown to students before grades are published")
    if config.getoption("results") and not config.pluginmanager.hasplugin("terminal"):
        # `torchdrill grade`: no one reads pytest's failure text (results.json keeps its own
        # message and counterexample), and its long form parses the source of every frame:
        # measured 5-12 s of a stub's 17 s grading. One line per failure costs nothing.
        config.option.tbstyle = "line"
    if not hasattr(config, "workerinput"):  # controller (or no xdist): collect results
        collector = ResultsCollector(config)
        config.stash[_collector_key] = collector
        config.pluginmanager.register(collector, "torchdrill-results")


def pytest_sessionstart(session: pytest.Session) -> None:
    # After every pytest_configure, so after hypothesis' own plugin has loaded the
    # profile named by --hypothesis-profile: shrinking is switched off on top of it.
    if session.config.getoption("no_shrink"):
        _load_profile_without_shrinking()
    _start_sandbox_early(session.config)


def _start_sandbox_early(config: pytest.Config) -> None:
    """Start the sandbox's zygote now, so it imports torch while pytest collects.

    Only where tests run (not on an xdist controller), and only for an explicit
    ``--submission`` (the ``impl`` fixture asks for the very same sandbox).
    """
    option = config.getoption("submission")
    runs_tests = hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None)
    if config.getoption("isolation") != "none" and option and runs_tests:
        try:
            _sandbox(config, Path(option).resolve())
        except SandboxBroken:
            pass  # the first test's ``impl`` asks again, and its report stops the grading


def _sandbox(config: pytest.Config, root: Path):
    """This process's sandbox for the submission at ``root``, as the options ask."""
    from grader import remote
    try:
        return remote.sandbox_for(root, config.getoption("isolation"),
                                  config.getoption("sandbox_off"), config.getoption("call_timeout"))
    except (remote.SandboxError, OSError) as exc:  # the grader's failure, never a student's zero
        raise SandboxBroken(f"the sandbox could not start: {exc}") from None


def _load_profile_without_shrinking() -> None:
    """Load the current profile minus the shrink phase.

    With ``derandomize`` the generate phase draws the same inputs either way, and a
    property loses as soon as one input fails, so every property passes or loses as
    it would with shrinking and the score does not change. What a failure shows can:
    its counterexample is the first failing input, not the minimal one, and the
    shrinker may have walked from a wrong answer to a smaller input that raises
    (``failed`` here, ``error`` there).
    """
    current = settings.default
    settings.register_profile("torchdrill-active-no-shrink", parent=current,
                              phases=tuple(p for p in current.phases if p is not Phase.shrink))
    settings.load_profile("torchdrill-active-no-shrink")


# ------------------------------------------------------------------ exercises

def exercise_id(path: Path, marker: pytest.Mark | None = None) -> str:
    """``.../tests/tensors/test_one_hot.py`` -> ``tensors/one_hot``."""
    if marker is not None and marker.kwargs.get("id"):
        return marker.kwargs["id"]
    parts = path.parts
    top = len(parts) - 1 - parts[::-1].index("tests")
    name = path.stem.removeprefix("test_")
    return "/".join((*parts[top + 1:-1], name))


def course_root(path: Path) -> Path:
    """The folder holding ``tests/`` (and ``exercises/``, ``reference/``)."""
    parts = path.parts
    top = len(parts) - 1 - parts[::-1].index("tests")
    return Path(*parts[:top])


def _exercise_marker(item: pytest.Item) -> pytest.Mark | None:
    module = item.getparent(pytest.Module)
    if module is None:
        return None
    return next((m for m in module.iter_markers("exercise")), None)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        marker = _exercise_marker(item)
        if marker is None:
            continue
        path = Path(str(item.path))
        weight = item.get_closest_marker("weight")
        module = item.getparent(pytest.Module)
        doc = (module.obj.__doc__ or "").strip().splitlines() if module else []
        meta = {
            "exercise": exercise_id(path, marker),
            "points": float(marker.kwargs.get("points", marker.args[0] if marker.args else 0)),
            "title": doc[0] if doc else "",
            "weight": float(weight.args[0]) if weight else 1.0,
            "hidden": item.get_closest_marker("hidden") is not None,
            "forbid": dict(marker.kwargs.get("forbid") or {}),  # for the static scan
            "markers": sorted(m.name for m in item.iter_markers()
                              if m.name in ("cuda", "distributed", "hidden")),
        }
        item.user_properties.append((META, json.dumps(meta)))


def _meta(item: pytest.Item) -> dict[str, Any] | None:
    for key, value in item.user_properties:
        if key == META:
            return json.loads(value)
    return None


@pytest.fixture
def impl(request: pytest.FixtureRequest) -> Implementation:
    """The submission's functions for this test module's exercise (see grader.impl)."""
    marker = _exercise_marker(request.node)
    if marker is None:
        raise pytest.UsageError(f"{request.node.nodeid}: 'impl' needs a module marked "
                                "pytest.mark.exercise(points=...)")
    path = Path(str(request.node.path))
    root = submission_root(request.config, path)
    forbidden = Forbidden.from_marker(marker.kwargs.get("forbid"))
    if request.config.getoption("isolation") == "none":
        return Implementation(root, exercise_id(path, marker), forbidden)
    from grader import remote
    return remote.SandboxedImplementation(root, exercise_id(path, marker), forbidden,
                                          _sandbox(request.config, root))


def submission_root(config: pytest.Config, test_path: Path) -> Path:
    """The folder graded: ``--submission``, else ``exercises/`` beside the tests."""
    option = config.getoption("submission")
    return (Path(option) if option else course_root(test_path) / "exercises").resolve()


_reference_cache: dict[tuple[Path, str], ModuleType] = {}


@pytest.fixture
def ref(request: pytest.FixtureRequest) -> ModuleType:
    """The reference solution's module for this test module's exercise."""
    path = Path(str(request.node.path))
    option = request.config.getoption("reference_dir")
    root = (Path(option) if option else course_root(path) / "reference").resolve()
    key = (root, exercise_id(path, _exercise_marker(request.node)))
    if key not in _reference_cache:
        if not root.is_dir():
            raise pytest.UsageError(f"no reference solutions at {root}")
        _reference_cache[key] = load_exercise(*key, namespace="torchdrill_reference")
    return _reference_cache[key]


# ------------------------------------------------------------------ requirements, clock

def _missing_requirement(item: pytest.Item) -> str | None:
    if item.get_closest_marker("cuda"):
        import torch
        if not torch.cuda.is_available():
            return "needs a CUDA device; this runner has none (run tox -e cuda on a CUDA machine)"
    if item.get_closest_marker("distributed"):
        import torch.distributed as dist
        if not (dist.is_available() and dist.is_gloo_available()):
            return "needs torch.distributed with gloo, which this torch build lacks"
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if _meta(item) is None:
        return
    reason = _missing_requirement(item)
    if reason:
        item.stash[_not_run_reason] = reason
        pytest.skip(reason)


def _clock(item: pytest.Item):
    """Raise ``TimedOut`` in the test's thread when its time is up (main thread only)."""
    limit = item.config.getoption("test_timeout")
    if not limit or threading.current_thread() is not threading.main_thread() \
            or not hasattr(signal, "setitimer"):
        return None

    def expire(signum, frame):
        signal.setitimer(signal.ITIMER_REAL, 1.0)  # again, in case the student swallows it
        raise TimedOut(f"the test ran past its {limit:g} s limit")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, limit)
    return previous


def _stop_clock(previous) -> None:
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    previous = _clock(item) if _meta(item) is not None else None
    try:
        return (yield)
    finally:
        if previous is not None:
            _stop_clock(previous)


# ------------------------------------------------------------------ outcomes

def classify(exc: BaseException | None) -> tuple[str, str]:
    """(outcome, message) for what a graded test raised."""
    if exc is None:
        return PASSED, ""
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return classify(exc.exceptions[0])
    if isinstance(exc, NotAttempted):
        return NOT_ATTEMPTED, str(exc)
    if isinstance(exc, TimedOut):
        return TIMED_OUT, str(exc)
    if isinstance(exc, BrokenContract):
        return ERROR, str(exc)
    if isinstance(exc, SubmissionError):
        return ERROR, str(exc)
    if isinstance(exc, StudentError):
        return ERROR, f"{exc}\n{exc.traceback_text}".strip()
    if isinstance(exc, AssertionError):
        return FAILED, str(exc).strip() or "assertion failed"
    return FAILED, f"the test could not check the result: {type(exc).__name__}: {exc}"


def _failing_case(exc: BaseException) -> str:
    notes = getattr(exc, "__notes__", []) or []
    return "\n".join(n for n in notes if n.startswith(("Failing test case", "Falsifying")))


def _counterexample(item: pytest.Item, exc: BaseException) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    case = _failing_case(exc)
    if case:
        out["example"] = case
    impl = getattr(item, "funcargs", {}).get("impl")
    if isinstance(impl, Implementation) and impl.calls:
        out["calls"] = impl.calls
    if isinstance(exc, Mismatch):
        out.update(exc.details)
    return out or None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if _meta(item) is None:
        return report
    exc = call.excinfo.value if call.excinfo is not None else None
    if isinstance(exc, SandboxBroken):  # the controller stops the grading on this report
        report.user_properties.append((SANDBOX_BROKEN, str(exc)))
        return report
    if report.skipped:
        reason = item.stash.get(_not_run_reason, None)
        info = ({"outcome": NOT_RUN, "message": reason} if reason else
                {"outcome": ERROR, "message": f"the test was skipped unexpectedly: {exc}"})
    else:
        outcome, message = classify(exc)
        info = {"outcome": outcome, "message": message[:MAX_MESSAGE]}
        if outcome in (FAILED, ERROR) and exc is not None:
            info["counterexample"] = _counterexample(item, exc)
        isolation = _isolation_used()
        if isolation:
            info["isolation"] = isolation
        if call.when == "call":  # later reports repeat earlier phases' output
            for stream, text in (("stdout", report.capstdout), ("stderr", report.capstderr)):
                if text:
                    info[stream] = _capped(text)
    report.user_properties.append((OUTCOME, json.dumps(info)))
    return report


def _isolation_used() -> dict[str, Any] | None:
    """What confined this process's workers, once one has started (else None)."""
    remote = sys.modules.get("grader.remote")
    return remote.isolation_report() if remote is not None else None


def pytest_unconfigure(config: pytest.Config) -> None:
    remote = sys.modules.get("grader.remote")
    if remote is not None:
        remote.close_all()


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _capped(text: str) -> str:
    """At most ``MAX_OUTPUT`` characters, control characters (terminal escapes,
    bells) shown as ``\\x1b`` and the like: output is shown, never interpreted."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    if len(text) <= MAX_OUTPUT:
        return text
    return text[:MAX_OUTPUT] + f"\n... ({len(text) - MAX_OUTPUT} more characters not kept)"


# ------------------------------------------------------------------ results (controller)

class ResultsCollector:
    """Folds graded test reports into results; registered on the controller only."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.exercises: dict[str, results_module.ExerciseInfo] = {}
        self.tests: dict[str, results_module.TestRecord] = {}
        self.results: dict[str, Any] | None = None
        self.tests_dir: Path | None = None
        self.isolation: dict[str, Any] | None = None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        if SANDBOX_BROKEN in props:  # no score at all, rather than a zero for every test
            pytest.exit(props[SANDBOX_BROKEN], returncode=SANDBOX_FAILED)
        if META not in props or OUTCOME not in props:
            return
        meta, info = json.loads(props[META]), json.loads(props[OUTCOME])
        if info.get("isolation") and self.isolation is None:
            self.isolation = info["isolation"]
        eid = meta["exercise"]
        if eid not in self.exercises:
            root = submission_root(self.config, Path(self.config.rootpath, report.nodeid.split("::")[0]))
            self.exercises[eid] = results_module.ExerciseInfo(
                eid, meta["points"], meta["title"],
                static_flags=scan.flags_for(root, eid, meta.get("forbid")))
        record = self.tests.get(report.nodeid)
        if record is None:
            record = self.tests[report.nodeid] = results_module.TestRecord(
                exercise=eid, name=report.nodeid.split("::", 1)[-1], outcome=PASSED,
                weight=meta["weight"], hidden=meta["hidden"], markers=meta["markers"])
        record.duration_s += report.duration
        if self.tests_dir is None:
            self.tests_dir = course_root(Path(self.config.rootpath, report.nodeid.split("::")[0])) / "tests"
        for stream in ("stdout", "stderr"):
            if info.get(stream):
                setattr(record, stream, getattr(record, stream) + info[stream])
        if record.outcome == PASSED and info["outcome"] != PASSED:
            record.outcome = info["outcome"]
            record.message = info.get("message", "")
            record.counterexample = info.get("counterexample")

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not self.tests:
            return
        option = self.config.getoption("submission")
        submission = str(Path(option).resolve()) if option else "exercises (default)"
        environment = {"torch": _torch_version(), "cuda_available": _cuda_available(),
                       "workers": getattr(self.config.option, "numprocesses", None) or 0,
                       "shrink": not self.config.getoption("no_shrink"),
                       "isolation": self.isolation or {"mode": self.config.getoption("isolation")}}
        suite = results_module.suite_hash(self.tests_dir) if self.tests_dir else None
        self.results = results_module.build(submission, self.exercises,
                                            list(self.tests.values()), environment, suite)
        if self.tests_dir is not None:  # course order, and the hints the learner used
            from grader import course
            course.annotate(self.results, self.tests_dir.parent,
                            Path(option).resolve() if option else self.tests_dir.parent / "exercises")
        path = self.config.getoption("results")
        if path:
            results_module.write(self.results, Path(path))

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.results is not None:
            text = io.StringIO()
            render(self.results, file=text)
            terminalreporter.ensure_newline()
            terminalreporter.write(text.getvalue())


def _torch_version() -> str:
    import torch
    return torch.__version__


def _cuda_available() -> bool:
    import torch
    return torch.cuda.is_available()
