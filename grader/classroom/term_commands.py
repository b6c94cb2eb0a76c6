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
from grader.classroom.classgrade import written_line
from grader.classroom.gradebook import Gradebook
from grader.classroom.publishing import publish
from grader.classroom.term import assignments_of, now
from grader.core import assignments as course_assignments
from grader.core.assignments import Assignment
from grader.core.errors import EXIT_OK, UsageError
from grader.core.i18n import _
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
                raise UsageError(_("--days must be a positive number of days (got {days})", days=f"{args.days:g}"))
            extension = Extension(days=float(args.days))
            shown = assignment.due + timedelta(days=args.days)
        else:
            shown = parse_until(args.until, assignment)
            extension = Extension(until=shown.isoformat())
        print(_("{student}: {assignment} due {due} (the class's: {class_due})", student=args.student,
                assignment=assignment.name, due=shown.astimezone(assignment.zone).isoformat(),
                class_due=assignment.due.isoformat()))
    with _open(out) as book:
        with book.transaction(_("set the extension of {student}", student=repr(args.student))) as db:
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
            raise UsageError(_("give the POINTS to set (or --clear to remove the override)"))
        try:
            points = float(args.points)
        except ValueError:
            raise UsageError(_("POINTS must be a number, not {points}", points=repr(args.points))) from None
        if not math.isfinite(points) or points < 0:
            raise UsageError(_("POINTS must be a number of points, 0 or more (got {points})", points=args.points))
        if not (args.reason or "").strip():
            raise UsageError(_("an override needs --reason TEXT: the student's report shows it"))
    with _open(out) as book:
        if args.student not in book.students():
            raise UsageError(_("no student {student} in {path}: grade them first", student=repr(args.student),
                               path=book.path))
        with book.transaction(_("set the override of {student}", student=repr(args.student))) as db:
            term_tables.set_override(db, args.student, target, points, (args.reason or "").strip(),
                                     args.by or _user(), now())
        print(_("{student}: {target} override removed", student=args.student, target=target) if points is None
              else _("{student}: {target} set to {points} points", student=args.student, target=target,
                     points=f"{points:g}"))
        return _republish(book, out, course)


def parse_until(text: str, assignment: Assignment) -> datetime:
    """``--until``: an ISO date and time; without an offset, on the assignment's clock."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(_("--until {text} is not a date and time (e.g. 2026-09-20T23:59 or "
                           "2026-09-20T23:59:00-04:00)", text=repr(text))) from None
    return when if when.tzinfo is not None else course_assignments.localize(when, assignment.zone)


def _republish(book: Gradebook, out: Path, course: Path) -> int:
    written = publish(book, out, course, gradescope=ClassLayout(out).gradescope.is_dir())
    for what, where in written.items():
        print(written_line(what, where))
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
    path = course / course_assignments.COURSE_FILE
    if found:
        raise UsageError(_("no assignment {name} in {path}; its assignments: {names}", name=repr(name),
                           path=path, names=", ".join(a.name for a in found)))
    raise UsageError(_("no assignment {name} in {path} (it has no [[assignments]])", name=repr(name), path=path))


def _target(course: Path, given: str) -> str:
    """A drill id or an assignment name."""
    names = [a.name for a in assignments_of(course)]
    if given in names:
        return given
    try:
        return load_course(course).resolve(given)
    except CourseError as exc:
        raise UsageError(_("{given} is neither an assignment ({names}) nor a drill: {error}", given=given,
                           names=", ".join(names) or _("none"), error=exc)) from None


def _check_student(student: str) -> None:
    problem = student_id_problem(student)
    if problem:
        raise UsageError(problem)


def _user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"
