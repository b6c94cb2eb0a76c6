"""``torchdrill extend`` and ``torchdrill override``: an instructor's decisions about
one student, kept in the gradebook with who, when and why.

Each decision is one transaction (the extension or override and its line in the
decision log); then the term grades are settled and the reports and exports made
again from the gradebook (``grader.classroom.publishing.publish``): nothing is
graded again.
"""

from __future__ import annotations

import argparse
import getpass
import math
from datetime import datetime, timedelta
from pathlib import Path

from grader.classroom import gradebook, term_tables
from grader.classroom.gradebook import Gradebook
from grader.classroom.publishing import publish
from grader.classroom.term import assignments_of, now
from grader.core import assignments as course_assignments
from grader.core.assignments import Assignment
from grader.core.errors import EXIT_OK, UsageError
from grader.core.layout import ClassLayout
from grader.core.students import student_id_problem
from grader.core.syllabus import CourseError, find_course
from grader.core.syllabus import load as load_course
from grader.core.term_grades import Extension


def cmd_extend(args: argparse.Namespace) -> int:
    """``torchdrill extend DIR STUDENT ASSIGNMENT --until TIME | --days N | --clear``."""
    course, out = _places(args)
    assignment = _assignment(course, args.assignment)
    _check_student(args.student)
    extension: Extension | None = None
    if not args.clear:
        if args.days is not None:
            if not math.isfinite(args.days) or args.days <= 0:
                raise UsageError(f"--days must be a positive number of days (got {args.days:g})")
            extension = Extension(days=float(args.days))
            shown = assignment.due + timedelta(days=args.days)
        else:
            shown = parse_until(args.until, assignment)
            extension = Extension(until=shown.isoformat())
        print(f"{args.student}: {assignment.name} due {shown.astimezone(assignment.zone).isoformat()} "
              f"(the class's: {assignment.due.isoformat()})")
    with _open(out) as book:
        with book.transaction(f"set the extension of {args.student!r}") as db:
            term_tables.set_extension(db, args.student, assignment.name, extension, args.reason or "",
                                      args.by or _user(), now())
        return _republish(book, out, course)


def cmd_override(args: argparse.Namespace) -> int:
    """``torchdrill override DIR STUDENT (DRILL|ASSIGNMENT) POINTS --reason TEXT | --clear``."""
    course, out = _places(args)
    _check_student(args.student)
    target = _target(course, args.target)
    points: float | None = None
    if not args.clear:
        if args.points is None:
            raise UsageError("give the POINTS to set (or --clear to remove the override)")
        try:
            points = float(args.points)
        except ValueError:
            raise UsageError(f"POINTS must be a number, not {args.points!r}") from None
        if not math.isfinite(points) or points < 0:
            raise UsageError(f"POINTS must be a number of points, 0 or more (got {args.points})")
        if not (args.reason or "").strip():
            raise UsageError("an override needs --reason TEXT: the student's report shows it")
    with _open(out) as book:
        if args.student not in book.students():
            raise UsageError(f"no student {args.student!r} in {book.path}: grade them first")
        with book.transaction(f"set the override of {args.student!r}") as db:
            term_tables.set_override(db, args.student, target, points, (args.reason or "").strip(),
                                     args.by or _user(), now())
        print(f"{args.student}: {target} " + ("override removed" if points is None else f"set to {points:g} points"))
        return _republish(book, out, course)


def parse_until(text: str, assignment: Assignment) -> datetime:
    """``--until``: an ISO date and time; without an offset, on the assignment's clock."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"--until {text!r} is not a date and time (e.g. 2026-09-20T23:59 or "
                         "2026-09-20T23:59:00-04:00)") from None
    return when if when.tzinfo is not None else course_assignments.localize(when, assignment.zone)


def _republish(book: Gradebook, out: Path, course: Path) -> int:
    written = publish(book, out, course, gradescope=ClassLayout(out).gradescope.is_dir())
    for what, where in written.items():
        print(f"{what}: {where}")
    return EXIT_OK


def _places(args: argparse.Namespace) -> tuple[Path, Path]:
    course = Path(args.course).resolve() if args.course else find_course(Path.cwd())
    out = Path(args.dir).resolve()
    gradebook.existing(ClassLayout(out).gradebook)
    return course, out


def _open(out: Path) -> Gradebook:
    return Gradebook.open(ClassLayout(out).gradebook)


def _assignment(course: Path, name: str) -> Assignment:
    found = assignments_of(course)
    for a in found:
        if a.name == name:
            return a
    raise UsageError(f"no assignment {name!r} in {course / course_assignments.COURSE_FILE}"
                     + (f"; its assignments: {', '.join(a.name for a in found)}" if found else
                        " (it has no [[assignments]])"))


def _target(course: Path, given: str) -> str:
    """A drill id or an assignment name."""
    names = [a.name for a in assignments_of(course)]
    if given in names:
        return given
    try:
        return load_course(course).resolve(given)
    except CourseError as exc:
        raise UsageError(f"{given} is neither an assignment ({', '.join(names) or 'none'}) nor a drill: {exc}") from None


def _check_student(student: str) -> None:
    problem = student_id_problem(student)
    if problem:
        raise UsageError(problem)


def _user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"
