"""The term's tables in the gradebook: submission times, extensions, overrides, the
log of every decision, and the history of each student's term grade.

``migration_2`` adds them to a version-1 gradebook (``grader.classroom.gradebook``
appends it to its migrations): it only creates tables, so every row of an older
gradebook stays as it was. The functions below read or write them on a
connection; the writers run inside the gradebook's one-transaction-per-change
(``Gradebook.transaction``), so a ``kill -9`` leaves each change whole or absent.

Why a decision log beside the tables: an extension or override is replaced when
set again, while the log keeps every value ever set, with who, when and why.
``grade_changes`` keeps every term grade a student had and why it changed: a
regrade, a new submission time, an extension or an override.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from grader.core.term_grades import Extension, Override


def migration_2(db: sqlite3.Connection) -> None:
    """The term: when each submission was handed in (per student and assignment),
    extensions, overrides, the decision log and the history of term grades."""
    statements = (
        """CREATE TABLE submission_times (
               student TEXT NOT NULL,
               assignment TEXT NOT NULL,
               submitted_at TEXT NOT NULL,
               source TEXT NOT NULL,
               submission INTEGER REFERENCES submissions(id),
               recorded_at TEXT NOT NULL,
               PRIMARY KEY (student, assignment))""",
        """CREATE TABLE extensions (
               student TEXT NOT NULL,
               assignment TEXT NOT NULL,
               until TEXT,
               days REAL,
               reason TEXT NOT NULL,
               set_by TEXT NOT NULL,
               set_at TEXT NOT NULL,
               CHECK (until IS NOT NULL OR days IS NOT NULL),
               PRIMARY KEY (student, assignment))""",
        """CREATE TABLE overrides (
               student TEXT NOT NULL,
               target TEXT NOT NULL,
               points REAL NOT NULL,
               reason TEXT NOT NULL,
               set_by TEXT NOT NULL,
               set_at TEXT NOT NULL,
               PRIMARY KEY (student, target))""",
        """CREATE TABLE decisions (
               id INTEGER PRIMARY KEY,
               student TEXT NOT NULL,
               kind TEXT NOT NULL CHECK (kind IN ('extension', 'override')),
               target TEXT NOT NULL,
               value TEXT,
               reason TEXT NOT NULL,
               made_by TEXT NOT NULL,
               made_at TEXT NOT NULL)""",
        """CREATE TABLE grade_changes (
               id INTEGER PRIMARY KEY,
               student TEXT NOT NULL,
               changed_at TEXT NOT NULL,
               submission INTEGER REFERENCES submissions(id),
               raw REAL NOT NULL,
               penalty REAL NOT NULL,
               override REAL NOT NULL,
               final REAL NOT NULL,
               why TEXT NOT NULL,
               term_json TEXT NOT NULL)""",
        "CREATE INDEX grade_changes_by_student ON grade_changes(student, id)",
    )
    for statement in statements:
        db.execute(statement)


@dataclass(frozen=True)
class TermInputs:
    """Everything the gradebook knows about one student's term, to compute the grade."""
    times: dict[str, tuple[str, str]]
    extensions: dict[str, Extension]
    overrides: dict[str, Override]


# ---------------------------------------------------------------- writing

def record_times(db: sqlite3.Connection, student: str, submission: int | None,
                 times: Mapping[str, tuple[str, str]], now: str, *, replace: bool = True) -> None:
    """Assignment -> (submitted at, source) for ``student``; ``replace=False`` keeps
    times already recorded (a skipped, unchanged submission)."""
    conflict = ("DO UPDATE SET submitted_at = excluded.submitted_at, source = excluded.source, "
                "submission = excluded.submission, recorded_at = excluded.recorded_at") if replace else "DO NOTHING"
    db.executemany("INSERT INTO submission_times (student, assignment, submitted_at, source, submission, "
                   f"recorded_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (student, assignment) {conflict}",
                   [(student, a, at, source, submission, now) for a, (at, source) in times.items()])


def set_extension(db: sqlite3.Connection, student: str, assignment: str, extension: Extension | None,
                  reason: str, by: str, now: str) -> None:
    """Set (or with None remove) a student's extension, and log the decision."""
    if extension is None:
        db.execute("DELETE FROM extensions WHERE student = ? AND assignment = ?", (student, assignment))
        value = None
    else:
        db.execute("INSERT INTO extensions (student, assignment, until, days, reason, set_by, set_at) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (student, assignment) DO UPDATE SET "
                   "until = excluded.until, days = excluded.days, reason = excluded.reason, "
                   "set_by = excluded.set_by, set_at = excluded.set_at",
                   (student, assignment, extension.until, extension.days, reason, by, now))
        value = json.dumps({"until": extension.until, "days": extension.days})
    _log(db, student, "extension", assignment, value, reason, by, now)


def set_override(db: sqlite3.Connection, student: str, target: str, points: float | None,
                 reason: str, by: str, now: str) -> None:
    """Set (or with None remove) an override of a drill's or assignment's points, and log it."""
    if points is None:
        db.execute("DELETE FROM overrides WHERE student = ? AND target = ?", (student, target))
    else:
        db.execute("INSERT INTO overrides (student, target, points, reason, set_by, set_at) "
                   "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (student, target) DO UPDATE SET "
                   "points = excluded.points, reason = excluded.reason, set_by = excluded.set_by, "
                   "set_at = excluded.set_at", (student, target, points, reason, by, now))
    _log(db, student, "override", target, None if points is None else json.dumps(points), reason, by, now)


def _log(db: sqlite3.Connection, student: str, kind: str, target: str, value: str | None,
         reason: str, by: str, now: str) -> None:
    db.execute("INSERT INTO decisions (student, kind, target, value, reason, made_by, made_at) "
               "VALUES (?, ?, ?, ?, ?, ?, ?)", (student, kind, target, value, reason, by, now))


def record_change(db: sqlite3.Connection, student: str, submission: int | None, term: Mapping[str, Any],
                  why: str, now: str) -> None:
    """A new term grade of ``student`` and why it changed."""
    db.execute("INSERT INTO grade_changes (student, changed_at, submission, raw, penalty, override, final, "
               "why, term_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
               (student, now, submission, term["raw"], term["penalty"], term["override"], term["final"], why,
                json.dumps(term, sort_keys=True, separators=(",", ":"))))


# ---------------------------------------------------------------- reading

def inputs(db: sqlite3.Connection, students: Iterable[str]) -> dict[str, TermInputs]:
    """Student -> their times, extensions and overrides (every student named, even with none)."""
    out = {s: TermInputs({}, {}, {}) for s in students}
    for student, assignment, at, source in db.execute(
            "SELECT student, assignment, submitted_at, source FROM submission_times"):
        if student in out:
            out[student].times[assignment] = (at, source)
    for student, assignment, until, days, reason, by, at in db.execute(
            "SELECT student, assignment, until, days, reason, set_by, set_at FROM extensions"):
        if student in out:
            out[student].extensions[assignment] = Extension(until, days, reason, by, at)
    for student, target, points, reason, by, at in db.execute(
            "SELECT student, target, points, reason, set_by, set_at FROM overrides"):
        if student in out:
            out[student].overrides[target] = Override(points, reason, by, at)
    return out


def last_terms(db: sqlite3.Connection) -> dict[str, dict[str, Any]]:
    """Student -> the term grade recorded last."""
    rows = db.execute("SELECT student, term_json FROM grade_changes WHERE id IN "
                      "(SELECT max(id) FROM grade_changes GROUP BY student)").fetchall()
    return {student: json.loads(text) for student, text in rows}


def changes(db: sqlite3.Connection, student: str) -> list[dict[str, Any]]:
    """Every term grade the student had, oldest first: when, the totals and why."""
    rows = db.execute("SELECT changed_at, raw, penalty, override, final, why FROM grade_changes "
                      "WHERE student = ? ORDER BY id", (student,)).fetchall()
    return [{"at": at, "raw": raw, "penalty": pen, "override": ov, "final": final, "why": why}
            for at, raw, pen, ov, final, why in rows]


def decisions(db: sqlite3.Connection, student: str | None = None) -> list[dict[str, Any]]:
    """The decision log (every extension and override ever set or removed), oldest first."""
    query = "SELECT student, kind, target, value, reason, made_by, made_at FROM decisions"
    rows = db.execute(query + (" WHERE student = ?" if student else "") + " ORDER BY id",
                      (student,) if student else ()).fetchall()
    return [dict(zip(("student", "kind", "target", "value", "reason", "by", "at"), r)) for r in rows]
