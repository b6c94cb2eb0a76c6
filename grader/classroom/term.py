"""A term's grades on a gradebook, settled from what the gradebook holds.

``settle`` computes every student's term grade (``grader.core.term_grades``) from
their current results, submission times, extensions and overrides, records each
grade that changed with the reason (in one transaction), and puts the grade and
its history into the results the reports and exports are made from. Nothing is
graded: an extension or an override only makes the reports and exports again
(``grader.classroom.publishing.publish``); the commands that set them are in
``grader.classroom.term_commands``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from grader.classroom import term_tables
from grader.classroom.gradebook import Gradebook
from grader.core import assignments as course_assignments
from grader.core import term_grades
from grader.core.assignments import Assignment
from grader.core.i18n import _
from grader.core.results_json import Results
from grader.core.syllabus import CourseError
from grader.core.syllabus import load as load_course


def assignments_of(course: Path) -> tuple[Assignment, ...]:
    """The course's assignments, each drill checked against the course."""
    found = course_assignments.load(course)
    if found:
        try:
            known = load_course(course).ids
        except CourseError:
            known = None
        if known is not None:
            course_assignments.check_drills(found, known, course / course_assignments.COURSE_FILE)
    return found


def settle(book: Gradebook, course: Path, current: dict[str, Results]) -> set[str]:
    """Put each student's term grade (with its history) into ``current`` and record
    the grades that changed; returns those students. Does nothing (returns an empty
    set) for a course with no assignments and a gradebook with no override."""
    found = assignments_of(course)
    known = term_tables.inputs(book.connection, current)
    if not found and not any(i.overrides for i in known.values()):
        return set()
    last = term_tables.last_terms(book.connection)
    submissions = {row.student: row.id for row in book.submission_rows()}
    terms = {student: _plain(term_grades.grade(results, found, times=known[student].times,
                                               extensions=known[student].extensions,
                                               overrides=known[student].overrides, course=course))
             for student, results in current.items()}
    changed = {s for s, term in terms.items() if last.get(s) != term}
    if changed:
        stamp = now()
        with book.transaction(_("record the term grades")) as db:
            for student in sorted(changed):
                term_tables.record_change(db, student, submissions.get(student), terms[student],
                                          why(last.get(student), terms[student]), stamp)
    for student, results in current.items():
        results["term"] = {**terms[student], "history": term_tables.changes(book.connection, student)}
    return changed


def why(before: Mapping[str, Any] | None, after: Mapping[str, Any]) -> str:
    """What changed between two term grades, in words (the history's reason)."""
    if before is None:
        return "graded"
    reasons = []
    if before.get("raw") != after["raw"]:
        reasons.append(f"regraded: {_n(before.get('raw'))} → {_n(after['raw'])} points graded")
    old = {g["name"]: g for g in before.get("assignments", [])}
    for group in after["assignments"]:
        name, was = group["name"] or "drills in no assignment", old.get(group["name"], {})
        if (was.get("submitted_at"), was.get("time_source"), was.get("time_trust", group.get("time_trust"))) != \
                (group.get("submitted_at"), group.get("time_source"), group.get("time_trust")):
            word = ", the student's word" if group.get("time_trust") == term_grades.STUDENTS_WORD else ""
            reasons.append(f"{name}: submitted at {group.get('submitted_at')} ({group.get('time_source')}{word})")
        if was.get("extension") != group.get("extension"):
            ext = group.get("extension")
            reasons.append(f"{name}: extension {ext['text']}" + (f" ({ext['reason']})" if ext["reason"] else "")
                           if ext else f"{name}: extension removed")
        was_overrides = {o["target"]: o for o in was.get("overrides", [])}
        now_overrides = {o["target"]: o for o in group["overrides"]}
        for target, o in now_overrides.items():
            if was_overrides.get(target) != o:
                reasons.append(f"override of {target}: {_n(o['points'])} points ({o['reason']}; by {o['by']})")
        reasons += [f"override of {t} removed" for t in was_overrides if t not in now_overrides]
        if (was.get("due"), was.get("policy"), was.get("late_window")) != \
                (group.get("due"), group.get("policy"), group.get("late_window")) and was:
            reasons.append(f"{name}: due date or late policy changed")
    return "; ".join(reasons) or "recomputed"


def _plain(term: dict[str, Any]) -> dict[str, Any]:
    """The term as it reads back from JSON (so a stored one compares equal)."""
    return json.loads(json.dumps(term, sort_keys=True))


def _n(x: Any) -> str:
    return f"{x:g}" if isinstance(x, (int, float)) else str(x)


def now() -> str:
    """Now, in UTC, to the second: when a decision or a grade change was made."""
    return datetime.now(UTC).isoformat(timespec="seconds")
