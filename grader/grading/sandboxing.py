"""The sandbox's life in a grading run: started early, shared with xdist's workers,
closed at the end.

A run that isolates the submission (``grader.sandbox``) starts its zygote while pytest
collects, so torch is imported by the time the first test asks for a worker; xdist's
controller starts it before its workers and hands each a share of it. ``sandbox``
gives the ``impl`` fixture this process's sandbox for a submission.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from grader.grading.request import GradingRequest
from grader.sandbox import zygote
from grader.sandbox.zygote import SandboxBroken, warm_for

SHARED_ZYGOTE = "torchdrill_zygote"  # workerinput: the controller's zygote, shared


class SandboxLifecycle:
    """The hooks that start, share and close this run's sandbox."""

    def __init__(self, config: pytest.Config, request: GradingRequest):
        self.config = config
        self.request = request

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Start the sandbox's zygote now, so it imports torch while pytest collects.

        Only where tests run (not on an xdist controller), and only for an explicit
        submission folder (the ``impl`` fixture asks for the very same sandbox).
        """
        folder = self.request.folder
        runs_tests = hasattr(self.config, "workerinput") or not getattr(self.config.option, "numprocesses", None)
        if not self.request.in_process and folder is not None and runs_tests:
            try:
                self.sandbox(folder)
            except SandboxBroken:
                pass  # the first test's ``impl`` asks again, and its report stops the grading

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """pytest-xdist's controller, before each worker starts: the workers share this
        process's zygote (``grader.sandbox.zygote``), started here if ``grade`` did not
        start it early. Where it cannot be shared, each worker starts its own."""
        request = self.request
        if request.folder is None:
            return
        started = zygote.start_early(request.isolation, request.sandbox_off, warm_for(_drills_asked(self.config)))
        shared = started.share() if started is not None else None
        if shared is not None:
            node.workerinput[SHARED_ZYGOTE] = shared

    def sandbox(self, root: Path) -> Any:
        """This process's sandbox for the submission at ``root``, as the request asks."""
        from grader.sandbox import sandboxes
        shared = getattr(self.config, "workerinput", {}).get(SHARED_ZYGOTE)
        if shared:
            zygote.attach(shared)
        try:
            return sandboxes.sandbox_for(root, self.request.isolation, self.request.sandbox_off,
                                         self.request.limits.call_s, warm_for(_drills_asked(self.config)),
                                         self.request.files)
        except (sandboxes.SandboxError, OSError) as exc:  # the grader's failure, never a student's zero
            raise SandboxBroken(f"the sandbox could not start: {exc}") from None

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        sandboxes = sys.modules.get("grader.sandbox.sandboxes")
        if sandboxes is not None:
            sandboxes.close_all()


def isolation_used() -> dict[str, Any] | None:
    """What confined this process's workers, once one has started (else None)."""
    sandboxes = sys.modules.get("grader.sandbox.sandboxes")
    return sandboxes.isolation_report() if sandboxes is not None else None


def _drills_asked(config: pytest.Config) -> int | None:
    """How many drills this run grades, from its arguments: one test file per drill
    (None: a folder, the whole course)."""
    files = {str(arg).split("::", 1)[0] for arg in config.args}
    if not files or any(Path(f).is_dir() for f in files):
        return None
    return len(files)
