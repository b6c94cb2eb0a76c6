"""Where commands write: the one description of an output folder.

``Layout`` is one submission's folder (``grade``'s ``reports/``, a student's folder
in a class); ``ClassLayout`` is ``grade-all``'s, which holds one ``Layout`` per
student. Every command that writes or reads these files asks them for the path.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

REPORTS_DIR = "reports"  # a course's default output folder
REPORT = "index.html"  # a submission's report, in its folder
STUDENTS = "students"  # a class's folder of one folder per student


@dataclass(frozen=True)
class Layout:
    """One submission's outputs."""

    root: Path

    @classmethod
    def default(cls, course: Path) -> Layout:
        return cls(course / REPORTS_DIR)

    @property
    def results(self) -> Path:
        return self.root / "results.json"

    @property
    def report(self) -> Path:
        return self.root / REPORT

    @property
    def gradescope(self) -> Path:
        return self.root / "gradescope" / "results.json"


@dataclass(frozen=True)
class ClassLayout:
    """A class's outputs (``grade-all DIR``)."""

    root: Path

    @property
    def gradebook(self) -> Path:
        return self.root / "gradebook.sqlite"

    @property
    def students(self) -> Path:
        return self.root / STUDENTS

    def student(self, student: str) -> Layout:
        return Layout(self.students / student)

    @property
    def class_report(self) -> Path:
        return self.root / "class.html"

    @property
    def grades_csv(self) -> Path:
        return self.root / "grades.csv"

    @property
    def similarity(self) -> Path:
        return self.root / "similarity.json"

    @property
    def gradescope(self) -> Path:
        return self.root / "gradescope"
