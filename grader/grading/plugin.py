"""The grading pytest plugin: inert until a run asks it to grade.

Loaded by the ``pytest11`` entry point in every pytest run wherever torchdrill is
installed (a grading names it instead: ``grader.grading.pipeline._plugins``), it declares
its options (``grader.grading.options``), its markers and the ``impl``/``ref`` fixtures,
and nothing else: no torch, no hypothesis profile, no results. A run grades when it carries a ``GradingRequest``
(``grader.grading.request``): handed in as a plugin object (``grader.grading.pipeline``),
sent to an xdist worker in its ``workerinput``, or, in a direct pytest run that gives
one of ``--submission``, ``--results`` or ``--reference-dir`` (``tox -e cuda``), read
here from the command line: this module is the one place that reads the plugin's
options. Only then is ``grader.grading.session`` imported and registered, as
hypothesis' own plugin loads a profile only when ``--hypothesis-profile`` asks for one.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from grader.core import course_secret
from grader.core.errors import UsageError
from grader.core.isolation import Isolation
from grader.grading import options
from grader.grading.request import WORKERINPUT_KEY, GradingRequest, Limits, RequestPlugin

SESSION = "torchdrill-grading"
MARKERS = (
    "exercise(points, forbid=None, mutates=None): a graded drill (module marker): its "
    "points, forbidden APIs, and what each function may change of its arguments",
    "weight(n): this property's share of the drill's points",
    "cuda: needs a CUDA device; 'not run here' elsewhere",
    "distributed: runs real torch.distributed (gloo) ranks",
    "hidden: not shown to students before grades are published",
)
_ACTIVATING = (options.SUBMISSION, options.RESULTS, options.REFERENCE_DIR)


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_to_pytest(parser.getgroup("torchdrill", "torchdrill grading"))


def grading_request(config: pytest.Config) -> GradingRequest | None:
    """What this run is asked to grade (None: it does not grade)."""
    for plugin in config.pluginmanager.get_plugins():
        if isinstance(plugin, RequestPlugin):
            return plugin.request
    sent = getattr(config, "workerinput", {}).get(WORKERINPUT_KEY)
    if sent is not None:
        return GradingRequest.from_json(sent)
    if any(config.getoption(o.dest) is not None for o in _ACTIVATING):
        return _from_command_line(config)
    return None


def _from_command_line(config: pytest.Config) -> GradingRequest:
    """The request a direct pytest run gives as options."""
    def path(dest: str, resolve: bool = True) -> Path | None:
        value = config.getoption(dest)
        return None if not value else Path(value).resolve() if resolve else Path(value)

    try:
        secret = (None if config.getoption(options.PUBLIC_EXAMPLES.dest)
                  else course_secret.given(config.getoption(options.SECRET_FILE.dest)))
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None
    return GradingRequest(
        folder=path(options.SUBMISSION.dest), reference=path(options.REFERENCE_DIR.dest),
        results=path(options.RESULTS.dest, resolve=False),
        isolation=Isolation(config.getoption(options.ISOLATION.dest)),
        sandbox_off=tuple(config.getoption(options.SANDBOX_OFF.dest) or ()),
        limits=Limits(call_s=config.getoption(options.CALL_TIMEOUT.dest),
                      test_s=config.getoption(options.TEST_TIMEOUT.dest),
                      drill_budget_s=config.getoption(options.DRILL_BUDGET.dest)),
        secret=secret, profile=config.getoption("hypothesis_profile", None),
        shrink=not config.getoption(options.NO_SHRINK.dest),
        workers=_workers(config))


def _workers(config: pytest.Config) -> int:
    given = getattr(config.option, "numprocesses", None)  # pytest-xdist's -n (``auto`` resolved later)
    return given if isinstance(given, int) else 0


@pytest.hookimpl(tryfirst=True)  # before hypothesis' plugin loads --hypothesis-profile
def pytest_configure(config: pytest.Config) -> None:
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    request = grading_request(config)
    if request is not None:
        from grader.grading.session import GradingSession
        config.pluginmanager.register(GradingSession(config, request), SESSION)


def _session(request: pytest.FixtureRequest) -> Any:
    session = request.config.pluginmanager.get_plugin(SESSION)
    if session is None:
        raise pytest.UsageError(
            f"{request.node.nodeid}: torchdrill's grading plugin is off in this run: run "
            "`torchdrill grade`, or give pytest --submission DIR (or --results FILE)")
    return session


@pytest.fixture
def impl(request: pytest.FixtureRequest) -> Any:
    """The submission's functions for this test module's exercise (``grader.contract.impl``)."""
    return _session(request).impl(request)


@pytest.fixture
def ref(request: pytest.FixtureRequest) -> ModuleType:
    """The reference solution's module for this test module's exercise."""
    return _session(request).ref(request)
