"""The term's tables in the gradebook: submission times, extensions, overrides, the
log of every decision, and the history of each student's term grade.

``migration_2`` adds them to a version-1 gradebook (``grader.classroom.gradebook``
appends it to its migrations): it only creates tables, so every row of an older
gradebook stays as it was. ``migration_3`` gives each submission time its trust
(``grader.core.term_grades.TRUSTED`` or ``STUDENTS_WORD``). The functions below
read or write them on a connection; the writers run inside the gradebook's
one-transaction-per-change (``Gradebook.transaction``), so a ``kill -9`` leaves each
change whole or absent.

Why a decision log beside the tables: an extension or override is replaced when
set again, while the log keeps every value ever set, with who, when and why (and,
read back by ``decisions``, the value and reason each replaced). A decision made
without a reason keeps the reason in force: a reason is never erased by a later one.
``grade_changes`` keeps every term grade a student had and why it changed: a
regrade, a new submission time, an extension or an override.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from grader.core.term_grades import STUDENTS_WORD, TRUSTED, Extension, Override, SubmissionTime


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


# What version 2 recorded from inside a submission, before times had a trust: a zip's
# member dates (``--times zip``) and a folder's own ``timestamp.txt``.
_STUDENTS_OWN_SOURCES = ("zip", "timestamp.txt")


def migration_3(db: sqlite3.Connection) -> None:
    """Each submission time's trust. The times version 2 read from inside a submission
    (its zip's member dates, its folder's own timestamp.txt) are marked as the
    student's word, every other one trusted; no row is changed otherwise."""
    db.execute(f"ALTER TABLE submission_times ADD COLUMN trust TEXT NOT NULL DEFAULT '{TRUSTED}' "
               f"CHECK (trust IN ('{TRUSTED}', '{STUDENTS_WORD}'))")
    db.execute(f"UPDATE submission_times SET trust = '{STUDENTS_WORD}' WHERE source IN "
               f"({', '.join('?' for _ in _STUDENTS_OWN_SOURCES)})", _STUDENTS_OWN_SOURCES)


@dataclass(frozen=True)
class TermInputs:
    """Everything the gradebook knows about one student's term, to compute the grade."""
    times: dict[str, SubmissionTime]
    extensions: dict[str, Extension]
    overrides: dict[str, Override]


# ---------------------------------------------------------------- writing

def record_times(db: sqlite3.Connection, student: str, submission: int | None,
                 times: Mapping[str, SubmissionTime | tuple[str, str]], now: str, *, replace: bool = True) -> None:
    """Assignment -> SubmissionTime (a pair: trusted) for ``student``; ``replace=False`` keeps times
    already recorded (a skipped, unchanged submission), but for the student's word,
    which a trusted time replaces."""
    update = ("DO UPDATE SET submitted_at = excluded.submitted_at, source = excluded.source, "
              "trust = excluded.trust, submission = coalesce(excluded.submission, submission_times.submission), "
              "recorded_at = excluded.recorded_at")
    conflict = update if replace else (f"{update} WHERE submission_times.trust = '{STUDENTS_WORD}' "
                                       f"AND excluded.trust = '{TRUSTED}'")
    db.executemany("INSERT INTO submission_times (student, assignment, submitted_at, source, trust, submission, "
                   f"recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (student, assignment) {conflict}",
                   [(student, a, t.at, t.source, t.trust, submission, now)
                    for a, t in ((a, SubmissionTime(*t)) for a, t in times.items())])


def reason_in_force(db: sqlite3.Connection, kind: str, student: str, target: str) -> str | None:
    """The reason of the student's extension of an assignment (``kind`` "extension") or
    override of a drill or assignment ("override"), or None when there is none."""
    table, column = {"extension": ("extensions", "assignment"), "override": ("overrides", "target")}[kind]
    row = db.execute(f"SELECT reason FROM {table} WHERE student = ? AND {column} = ?", (student, target)).fetchone()
    return None if row is None else str(row[0])


def set_extension(db: sqlite3.Connection, student: str, assignment: str, extension: Extension | None,
                  reason: str | None, by: str, now: str) -> str:
    """Set (or with None remove) a student's extension, and log the decision. A reason
    of None keeps the reason in force (none for a new extension); returns the reason
    the decision stands on."""
    if reason is None:
        reason = (reason_in_force(db, "extension", student, assignment) or "") if extension is not None else ""
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
    return reason


def set_override(db: sqlite3.Connection, student: str, target: str, points: float | None,
                 reason: str | None, by: str, now: str) -> str:
    """Set (or with None remove) an override of a drill's or assignment's points, and log
    it. A reason of None keeps the reason in force; returns the reason it stands on."""
    if reason is None:
        reason = (reason_in_force(db, "override", student, target) or "") if points is not None else ""
    if points is None:
        db.execute("DELETE FROM overrides WHERE student = ? AND target = ?", (student, target))
    else:
        db.execute("INSERT INTO overrides (student, target, points, reason, set_by, set_at) "
                   "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (student, target) DO UPDATE SET "
                   "points = excluded.points, reason = excluded.reason, set_by = excluded.set_by, "
                   "set_at = excluded.set_at", (student, target, points, reason, by, now))
    _log(db, student, "override", target, None if points is None else json.dumps(points), reason, by, now)
    return reason


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
    for student, assignment, at, source, trust in db.execute(
            "SELECT student, assignment, submitted_at, source, trust FROM submission_times"):
        if student in out:
            out[student].times[assignment] = SubmissionTime(at, source, trust)
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
    """The decision log (every extension and override ever set or removed), oldest first,
    each with the value and reason it replaced (``previous_value``, ``previous_reason``:
    None for the first decision about that student and target). Every change to the
    extensions and overrides is logged in its own transaction, so the line before is what
    the table held."""
    query = "SELECT student, kind, target, value, reason, made_by, made_at FROM decisions"
    rows = db.execute(query + (" WHERE student = ?" if student else "") + " ORDER BY id",
                      (student,) if student else ()).fetchall()
    out = []
    last: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in rows:
        decision = dict(zip(("student", "kind", "target", "value", "reason", "by", "at"), row))
        before = last.get((decision["student"], decision["kind"], decision["target"]))
        decision["previous_value"] = None if before is None else before["value"]
        decision["previous_reason"] = None if before is None else before["reason"]
        last[(decision["student"], decision["kind"], decision["target"])] = decision
        out.append(decision)
    return out
