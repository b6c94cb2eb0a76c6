"""What every command of the learner's loop shares: where things are (``Place``: the
course, the learner's folder, the results file), the results a learner's last
``grade`` or ``check`` left, and the one rule for the next drill.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from grader.core import record, results_json, syllabus
from grader.core.errors import UsageError
from grader.core.i18n import _
from grader.core.layout import Layout
from grader.core.outcomes import NOT_RUN, PASSED
from grader.core.results_json import Results
from grader.core.syllabus import Course, CourseError, find_course
from grader.intake.submission import learner_folder


@dataclass(frozen=True)
class Place:
    """The course, the learner's folder and the results file one command works with."""

    root: Path
    course: Course
    submission: Path
    results_path: Path

    def exercise_file(self, drill_id: str) -> Path:
        return self.submission / f"{drill_id}.py"

    def shown_path(self, path: Path) -> str:
        """``path`` relative to the current folder when it is below it (shorter to read)."""
        try:
            return str(path.relative_to(Path.cwd()))
        except ValueError:
            return str(path)


def place(args: argparse.Namespace) -> Place:
    root = Path(args.course).resolve() if args.course else find_course(Path.cwd())
    course = syllabus.load(root)
    submission = learner_folder(getattr(args, "submission", None) or "exercises", root)
    results, out = getattr(args, "results", None), getattr(args, "out", None)
    if results:
        results_path = Path(results).resolve()
    else:
        results_path = (Layout(Path(out).resolve()) if out else Layout.default(root)).results
    return Place(root, course, submission, results_path)


def last_results(path: Path) -> Results | None:
    """The results a learner's last ``grade`` or ``check`` left, or None."""
    try:
        return results_json.read(path)
    except (OSError, ValueError):
        return None


def statuses(results: Results | None) -> dict[str, str]:
    return {ex["id"]: ex["status"] for ex in (results.get("exercises", []) if results else [])}


def merge(old: Results | None, new: Results, course: Course) -> Results:
    """``new``'s exercises replace the same exercises of ``old``; the others stay.

    Results of another submission, or of another test suite (tests changed since),
    are not kept: they would describe something else (``grader.core.record.combine``).
    """
    return record.combine(old, new, course.ids).results


def next_unfinished(course: Course, status: dict[str, str]) -> str | None:
    """The next drill: the one rule ``list``, ``check``, ``watch`` and ``hint`` share.

    The first drill in course order that is not done, skipping drills that cannot be
    done here (every property "not run here", e.g. ``cuda``); None when none is left.
    The same results give the same answer in every command."""
    for drill_id in course.ids:
        if status.get(drill_id) not in (PASSED, NOT_RUN):
            return drill_id
    return None


def current_drill(where: Place) -> str:
    """The drill a learner is on: the first not done, in course order."""
    following = next_unfinished(where.course, statuses(last_results(where.results_path)))
    if following is None:
        raise UsageError(_("every drill is done; name the drill whose hints you want"))
    return following


def short_name(course: Course, drill_id: str) -> str:
    """The shortest name ``resolve`` maps back to ``drill_id``."""
    name = drill_id.rsplit("/", 1)[-1]
    try:
        return name if course.resolve(name) == drill_id else drill_id
    except CourseError:
        return drill_id
