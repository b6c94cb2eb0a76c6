"""What one grading is asked to do, typed: the ``GradingRequest``.

Every front door builds one, once: ``grade`` and ``check`` from their command lines,
``grade-all``'s grading process from its job, the Gradescope run from its config.
``grader.grading.pipeline.grade`` hands it to pytest as a plugin object; pytest-xdist's
workers receive it as JSON in their ``workerinput``; only a direct ``pytest`` run
(``tox -e cuda``, a course author's own) reads it from pytest's command line
(``grader.grading.plugin``). Nothing in a grading reads an option or the environment
for what the request says. A grading speaks no language: its results keep messages as
ids, and each view renders them in its reader's (``grader.core.i18n``).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from grader.core.course_secret import Secret
from grader.core.isolation import Isolation
from grader.core.time_budgets import DEFAULT_CALL_TIMEOUT_S

DEFAULT_TEST_TIMEOUT_S = 120.0
WORKERINPUT_KEY = "torchdrill_request"  # where an xdist worker finds it


@dataclass(frozen=True)
class Limits:
    """How long the submission may take. 0 for a timeout: no limit. A drill budget of
    None: the one ``tests/reference_times.json`` gives (``grader.core.time_budgets``)."""

    call_s: float = DEFAULT_CALL_TIMEOUT_S
    test_s: float = DEFAULT_TEST_TIMEOUT_S
    drill_budget_s: float | None = None


@dataclass(frozen=True)
class GradingRequest:
    """One grading: what is graded, with which tests, where its code runs, how long it
    may take, which examples are drawn, and which drills."""

    course: Path | None = None  # holds tests/ (None: found from each test file's path)
    folder: Path | None = None  # the submission laid out like exercises/ (None: exercises/ of the course)
    # The submission's files as the intake read them ("tensors/one_hot.py" -> bytes): what the
    # sandbox copies, the grader imports and the scan reads, so the bytes checked at intake are
    # the bytes graded and no file is read twice. None: read from ``folder`` (``check``).
    files: Mapping[str, bytes] | None = field(default=None, repr=False)
    reference: Path | None = None  # the reference solutions (None: reference/ of the course)
    results: Path | None = None  # where the session itself writes results.json (a direct pytest run)
    isolation: Isolation = Isolation.NONE
    sandbox_off: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    secret: Secret | None = None  # None: the public examples every learner can replay
    only: tuple[str, ...] = ()  # drill ids (none: every drill)
    marker: str | None = None  # a pytest -m expression choosing properties
    profile: str | None = None  # a hypothesis profile (None: the grading profile)
    shrink: bool = True
    workers: int = 0  # pytest-xdist workers (0: this process)

    @property
    def in_process(self) -> bool:
        return self.isolation is Isolation.NONE

    def at(self, folder: Path, files: Mapping[str, bytes] | None = None) -> GradingRequest:
        """The same request for the submission laid out at ``folder``, whose files (when
        given) are ``files``."""
        return replace(self, folder=folder, files=files)

    def source(self, drill: str) -> bytes | None:
        """The bytes of ``drill``'s file as read at intake (None: not read there)."""
        return None if self.files is None else self.files.get(f"{drill}.py")

    def to_json(self) -> dict[str, Any]:
        """The request as plain data, for an xdist worker (the secret's text included: the
        worker is this grading's own process, not a sandboxed one)."""
        return {
            "course": _text(self.course), "folder": _text(self.folder), "reference": _text(self.reference),
            "files": None if self.files is None else {k: base64.b64encode(v).decode() for k, v in self.files.items()},
            "results": _text(self.results), "isolation": self.isolation.value,
            "sandbox_off": list(self.sandbox_off),
            "limits": {"call_s": self.limits.call_s, "test_s": self.limits.test_s,
                       "drill_budget_s": self.limits.drill_budget_s},
            "secret": None if self.secret is None else {"text": self.secret.text, "source": self.secret.source},
            "only": list(self.only), "marker": self.marker, "profile": self.profile, "shrink": self.shrink,
            "workers": self.workers,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GradingRequest:
        secret = data.get("secret")
        return cls(
            course=_path(data.get("course")), folder=_path(data.get("folder")),
            files=None if data.get("files") is None else {k: base64.b64decode(v) for k, v in data["files"].items()},
            reference=_path(data.get("reference")), results=_path(data.get("results")),
            isolation=Isolation(data["isolation"]), sandbox_off=tuple(data.get("sandbox_off") or ()),
            limits=Limits(**data["limits"]),
            secret=None if secret is None else Secret(secret["text"], secret["source"]),
            only=tuple(data.get("only") or ()), marker=data.get("marker"), profile=data.get("profile"),
            shrink=bool(data.get("shrink", True)), workers=int(data.get("workers") or 0))


class RequestPlugin:
    """The request, handed to pytest as a plugin (it has no hooks; ``grader.grading.plugin``
    finds it by its type)."""

    def __init__(self, request: GradingRequest):
        self.request = request


def _text(path: Path | None) -> str | None:
    return None if path is None else str(path)


def _path(text: str | None) -> Path | None:
    return None if not text else Path(text)
