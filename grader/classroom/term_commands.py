"""``torchdrill extend`` and ``torchdrill override``: an instructor's decisions about
one student, kept in the gradebook with who, when and why.

Both refuse a student the gradebook does not have, and an assignment or drill the
course does not have, saying what was probably meant. A decision given without
``--reason`` keeps the reason in force (an override's first needs one), so a later
change never erases why; the decision log keeps every change.

Each decision is one transaction (the extension or override and its line in the
decision log); then the term grades are settled and the reports and exports made
again from the gradebook (``grader.classroom.publishing.publish``): nothing is
graded again.
"""

from __future__ import annotations

import argparse
import difflib
import getpass
import math
from datetime import datetime, timedelta
from pathlib import Path

from grader.classroom import gradebook, term_tables
from grader.classroom.classgrade import written_line
from grader.classroom.gradebook import Gradebook
from grader.classroom.publishing import gradescope_files, publish
from grader.classroom.term import assignments_of, now
from grader.core import assignments as course_assignments
from grader.core.assignments import Assignment
from grader.core.errors import EXIT_OK, UsageError
from grader.core.i18n import _
from grader.core.layout import ClassLayout
from grader.core.students import Lookalikes, shown_id, student_id_problem, student_name
from grader.core.syllabus import CourseError, drill_facts, find_course
from grader.core.syllabus import load as load_course
from grader.core.term_grades import Extension


def cmd_extend(args: argparse.Namespace) -> int:
    """``torchdrill extend DIR STUDENT ASSIGNMENT --until TIME | --days N | --clear``."""
    course, out = _places(args)
    assignment = _assignment(course, args.assignment)
    _check_student(args)
    extension: Extension | None = None
    shown = None
    if not args.clear:
        if args.days is not None:
            if not math.isfinite(args.days) or not 0 < args.days <= MAX_EXTENSION_DAYS:
                raise UsageError(_("--days must be a number of days above 0 and at most {most} (got {days})",
                                   most=MAX_EXTENSION_DAYS, days=f"{args.days:g}"))
            extension = Extension(days=float(args.days))
            shown = assignment.due + timedelta(days=args.days)
        else:
            shown = parse_until(args.until, assignment)
            _check_until(shown, assignment)
            extension = Extension(until=shown.isoformat())
    with _open(out) as book:
        _known_student(book, args.student)
        given = _reason(args)
        with book.transaction(_("set the extension of {student}", student=repr(args.student))) as db:
            reason = term_tables.set_extension(db, args.student, assignment.name, extension, given,
                                               args.by or _user(), now())
        if shown is not None:
            print(_("{student}: {assignment} due {due} (the class's: {class_due})", student=args.student,
                    assignment=assignment.name, due=shown.astimezone(assignment.zone).isoformat(),
                    class_due=assignment.due.isoformat()))
        if given is None and reason:
            print(_("the reason in force is kept: {reason}", reason=reason))
        return _republish(book, out, course, args)


def cmd_override(args: argparse.Namespace) -> int:
    """``torchdrill override DIR STUDENT (DRILL|ASSIGNMENT) POINTS --reason TEXT | --clear``."""
    course, out = _places(args)
    _check_student(args)
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
        most = _most_points(course, target)
        if most is not None and points > most:
            raise UsageError(_("{target} is worth {most} points: an override of {points} is more than it "
                               "can give", target=target, most=f"{most:g}", points=f"{points:g}"))
    with _open(out) as book:
        _known_student(book, args.student)
        given = _reason(args)
        with book.transaction(_("set the override of {student}", student=repr(args.student))) as db:
            if points is not None and given is None \
                    and term_tables.reason_in_force(db, "override", args.student, target) is None:
                raise UsageError(_("an override needs --reason TEXT: the student's report shows it"))
            reason = term_tables.set_override(db, args.student, target, points, given, args.by or _user(), now())
        print(_("{student}: {target} override removed", student=args.student, target=target) if points is None
              else _("{student}: {target} set to {points} points", student=args.student, target=target,
                     points=f"{points:g}"))
        if given is None and reason:
            print(_("the reason in force is kept: {reason}", reason=reason))
        return _republish(book, out, course, args)


MAX_EXTENSION_DAYS = 3650  # ten years: past that, a date typed wrong


def _check_until(until: datetime, assignment: Assignment) -> None:
    """An extension moves the due date later, and not beyond ``MAX_EXTENSION_DAYS``
    (a year typed wrong would penalize the student, or be a date no report can show)."""
    try:
        later = until - assignment.due
    except OverflowError:
        later = timedelta.max
    try:
        until.astimezone(assignment.zone)  # a date no report could show on the course's clock
    except (OverflowError, ValueError):
        later = max(later, timedelta.max) if later > timedelta(0) else later
    if later <= timedelta(0):
        raise UsageError(_("--until {until} is not after {assignment}'s due date ({due}): an extension gives "
                           "more time", until=until.isoformat(), assignment=assignment.name,
                           due=assignment.due.isoformat()))
    if later > timedelta(days=MAX_EXTENSION_DAYS):
        raise UsageError(_("--until {until} is more than {most} days after {assignment}'s due date: is the "
                           "year right?", until=until.isoformat(), most=MAX_EXTENSION_DAYS,
                           assignment=assignment.name))


def _most_points(course: Path, target: str) -> float | None:
    """The points ``target`` (a drill id or an assignment's name) is worth, where known."""
    for assignment in assignments_of(course):
        if assignment.name == target:
            worth = [drill_facts(course, d)["points"] for d in assignment.drills]
            return None if None in worth else float(sum(worth))
    points = drill_facts(course, target)["points"]
    return None if points is None else float(points)


def parse_until(text: str, assignment: Assignment) -> datetime:
    """``--until``: an ISO date and time; without an offset, on the assignment's clock."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(_("--until {text} is not a date and time (e.g. 2026-09-20T23:59 or "
                           "2026-09-20T23:59:00-04:00)", text=repr(text))) from None
    return when if when.tzinfo is not None else course_assignments.localize(when, assignment.zone)


def _republish(book: Gradebook, out: Path, course: Path, args: argparse.Namespace) -> int:
    written = publish(book, out, course, gradescope=gradescope_files(args, ClassLayout(out).gradescope.is_dir()),
                      lang=args.lang)
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
    close = _close(name, [a.name for a in found])
    if close:
        raise UsageError(_("no assignment {name} in {path}: did you mean {suggestion}?", name=repr(name),
                           path=path, suggestion=close))
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
        close = _close(given, names)
        if close:  # closer to an assignment's name than to any drill's
            raise UsageError(_("{given} is neither an assignment nor a drill: did you mean the assignment "
                               "{suggestion}?", given=given, suggestion=close)) from None
        raise UsageError(_("{given} is neither an assignment ({names}) nor a drill: {error}", given=given,
                           names=", ".join(names) or _("none"), error=exc)) from None


def _known_student(book: Gradebook, student: str) -> None:
    """Refuse a student the gradebook does not have (a typo, a look-alike id): a decision
    about nobody would be kept and shown nowhere. Says which students were probably
    meant: ids that look alike (``grader.core.students.Lookalikes``), then close spellings."""
    known = list(book.students())
    if student in known:
        return
    suggestions = list(dict.fromkeys([*Lookalikes(known).like(student),
                                      *difflib.get_close_matches(student, known, n=3, cutoff=0.6)]))[:3]
    quoted = repr(student) + ("" if student.isascii() else f" ({ascii(student)[1:-1]})")  # a look-alike's escapes
    if suggestions:
        raise UsageError(_("no student {student} in {path}: did you mean {suggestion}?", student=quoted,
                           path=book.path, suggestion=_(" or ").join(map(shown_id, suggestions))))
    raise UsageError(_("no student {student} in {path}: grade them first", student=quoted, path=book.path))


def _close(given: str, names: list[str]) -> str | None:
    """The name of ``names`` that ``given`` is probably a misspelling of, if any."""
    close = difflib.get_close_matches(given, names, n=1, cutoff=0.6)
    return close[0] if close else None


def _reason(args: argparse.Namespace) -> str | None:
    """``--reason``, or None when it is left out or blank: the reason in force is kept."""
    return (args.reason or "").strip() or None


def _check_student(args: argparse.Namespace) -> None:
    """The id as the gradebook has it: composed (NFC), as a Mac's terminal may not type it."""
    student = args.student = student_name(args.student)
    problem = student_id_problem(student)
    if problem:
        raise UsageError(problem)


def _user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"
