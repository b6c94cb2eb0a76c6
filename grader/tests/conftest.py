"""The engine's tests: pytester for the plugin's tests, and a check that every shared
grading (``grader.tests.shared``) was made once in the whole session."""

from __future__ import annotations

import os

import pytest

from grader.tests.shared import made_twice, session_folder

pytest_plugins = ["pytester"]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # the controller (or a run without xdist) checks, once
    twice = made_twice(session_folder(session.config._tmp_path_factory))  # type: ignore[attr-defined]
    if twice:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"shared gradings made more than once in this session: {twice} "
                                "(grader/tests/shared.py: the workers no longer share them)", red=True)
