"""What the coordinator of ``grade-all`` and a grading process say to each other.

A ``GradingJob`` is one submission to grade (its files packed, how to grade them);
a ``GradingAnswer`` is what came of it. Both cross a pipe as one JSON line (a
local grading process) or travel as a Dask task's argument and result, so they
are plain data with a strict reader: a job that does not parse is refused whole.
"""

from __future__ import annotations

import base64
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from grader.core.course_secret import parse
from grader.core.isolation import Isolation
from grader.core.results_json import Results
from grader.grading.request import GradingRequest, Limits
from grader.intake.submission import Kind

CUDA_MARKER = "cuda"


class Part(StrEnum):
    """Which of a submission's tests a job runs: all that can run here, or only the
    ``cuda`` ones (on a GPU worker of a cluster; folded into the first part's results)."""

    ALL = "all"
    CUDA = "cuda"


@dataclass(frozen=True)
class GradingJob:
    """One submission and how to grade it."""

    student: str
    course: str  # the course folder, on the machine that grades
    files: bytes  # ``grader.intake.archives.pack`` of the submission's files
    isolation: Isolation
    limits: Limits = field(default_factory=Limits)
    shrink: bool = True
    kind: Kind = Kind.FOLDER
    notebook: dict[str, Any] | None = None  # a notebook's cell of each function
    only: list[str] | None = None
    profile: str | None = None
    marker: str | None = None  # ``-m`` expression (grade-all --marker)
    part: Part = Part.ALL
    secret: str | None = None  # the course secret's text: official examples on any machine
    sandbox_off: list[str] = field(default_factory=list)
    allow_degraded: bool = False

    def request(self, course: Path) -> GradingRequest:
        """The grading this job asks for, of ``course`` (on the machine that grades), with
        this part's marker."""
        markers = [m for m in (self.marker, CUDA_MARKER if self.part is Part.CUDA else None) if m]
        return GradingRequest(course=course, isolation=self.isolation, sandbox_off=tuple(self.sandbox_off),
                              limits=self.limits, secret=parse(self.secret, "the grading job") if self.secret else None,
                              only=tuple(self.only or ()), marker=" and ".join(f"({m})" for m in markers) or None,
                              profile=self.profile, shrink=self.shrink)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["files"] = base64.b64encode(self.files).decode()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GradingJob:
        """The job ``data`` holds; ``ValueError`` when it is not one."""
        try:
            return cls(**{**data, "files": base64.b64decode(data["files"], validate=True),
                          "limits": Limits(**data.get("limits") or {}),
                          "isolation": Isolation(data["isolation"]), "kind": Kind(data["kind"]),
                          "part": Part(data["part"])})
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a grading job: {exc}") from None


@dataclass
class GradingAnswer:
    """What grading a job gave: results, or why there are none."""

    results: Results | None = None
    error: str | None = None
    tests_s: float = 0.0  # time in test bodies
    wall_s: float = 0.0  # the job's time as its caller saw it
    worker: str = "?"  # host:pid:thread that graded it

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GradingAnswer:
        try:
            return cls(**data)
        except TypeError as exc:
            raise ValueError(f"not a grading answer: {exc}") from None
