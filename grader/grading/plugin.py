"""The grading pytest plugin: inert until a run asks it to grade.

Loaded by the ``pytest11`` entry point in every pytest run wherever torchdrill is
installed, it declares its options (``grader.grading.options``), its markers and
the ``impl``/``ref`` fixtures, and nothing else: no torch, no hypothesis profile,
no results. A run that gives one of ``--submission``, ``--results`` or
``--reference-dir`` (as ``torchdrill grade`` and ``tox -e cuda`` do) grades: only
then is ``grader.grading.session`` imported and registered, as hypothesis' own
plugin loads a profile only when ``--hypothesis-profile`` asks for one.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from grader.grading import options

SESSION = "torchdrill-grading"
MARKERS = (
    "exercise(points, forbid=None, mutates=None, id=None): a graded drill (module marker): its "
    "points, forbidden APIs, and what each function may change of its arguments",
    "weight(n): this property's share of the drill's points",
    "cuda: needs a CUDA device; 'not run here' elsewhere",
    "distributed: runs real torch.distributed (gloo) ranks",
    "hidden: not shown to students before grades are published",
)
_ACTIVATING = (options.SUBMISSION, options.RESULTS, options.REFERENCE_DIR)


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_to_pytest(parser.getgroup("torchdrill", "torchdrill grading"))


def grades(config: pytest.Config) -> bool:
    """Whether this run grades: one of the plugin's own path options is given."""
    return any(config.getoption(o.dest) is not None for o in _ACTIVATING)


@pytest.hookimpl(tryfirst=True)  # before hypothesis' plugin loads --hypothesis-profile
def pytest_configure(config: pytest.Config) -> None:
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    if grades(config):
        from grader.grading.session import GradingSession
        config.pluginmanager.register(GradingSession(config), SESSION)


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
