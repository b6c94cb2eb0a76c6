"""The class gradebook: ``DIR/gradebook.sqlite``, the record of a whole class's grades.

One process writes it (the ``grade-all`` coordinator), one transaction per graded
submission, so a crash or a ``kill -9`` of that process leaves every submission
either fully recorded or absent, never half-written, and loses nothing that was
committed. Readers (class report, exports) may open it while it is being written.

Durability: WAL journal with ``synchronous=FULL``. WAL alone already survives a
killed writer (a committed transaction is in the WAL file, which the kernel keeps
when the process dies); FULL also fsyncs each commit, which keeps the last grades
through a power loss and keeps the file safe if WAL cannot be used (a filesystem
without shared memory falls back to a rollback journal, which is only crash-safe
with FULL). It costs one fsync (about a millisecond) per submission, against the
seconds that grading a submission takes.

The schema is versioned (``PRAGMA user_version``) and marked as ours
(``PRAGMA application_id``). On open, the migrations from the file's version to
this code's are applied, each in its own transaction; a newer gradebook, or a
file that is not a torchdrill gradebook, is refused untouched.

Every submission row keeps the whole results dict (``results_json``): reports are
re-rendered from it, so the per-test rows are a queryable copy, never the source.

Why one module of about 500 lines: it is one job, the file's format, and the
parts do not stand alone. The schema, its migrations, the identity and version
checks on open and the ``Gradebook`` queries all describe the same tables; split
apart, a change to a column would touch several modules that only make sense
together, and nothing else in the engine reads SQL but the term's own tables
(``grader.classroom.term_tables``), which stand apart from these.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from grader.classroom import term_tables
from grader.core import scoring
from grader.core.errors import UsageError
from grader.core.i18n import _
from grader.core.results_json import MergeReport, Results, ResultsError, fold, validate
from grader.core.term_grades import SubmissionTime

# "TDGB" as a big-endian 32-bit integer: marks the SQLite file as a torchdrill gradebook
APPLICATION_ID = 0x54444742
SQLITE_HEADER = b"SQLite format 3\x00"
BUSY_TIMEOUT_MS = 10_000  # a reader's checkpoint can briefly hold the writer back


def existing(path: Path) -> Path:
    """``path``, for a command that works on a class already graded (``merge``,
    ``extend``, ``override``): no gradebook there is the user's mistake, not a new class."""
    if not path.is_file():
        raise GradebookError(_("no gradebook at {path}: run grade-all first", path=path))
    return path


class GradebookError(UsageError):
    """The gradebook cannot be opened, or refuses a write; the message names the file."""


Migration = Callable[[sqlite3.Connection], None]


def _migration_1(db: sqlite3.Connection) -> None:
    """The first schema: students, their submissions (history kept, one current),
    one row per test of each submission, and the entries that could not be graded."""
    statements = (
        f"PRAGMA application_id = {APPLICATION_ID}",
        """CREATE TABLE students (
               id TEXT PRIMARY KEY NOT NULL,
               first_graded_at TEXT NOT NULL)""",
        """CREATE TABLE submissions (
               id INTEGER PRIMARY KEY,
               student TEXT NOT NULL REFERENCES students(id),
               content_hash TEXT NOT NULL,
               suite_hash TEXT,
               graded_at TEXT NOT NULL,
               recorded_at TEXT NOT NULL,
               isolation TEXT,
               score REAL NOT NULL,
               max_score REAL NOT NULL,
               pending_points REAL NOT NULL,
               wall_s REAL NOT NULL,
               tests_s REAL NOT NULL,
               worker TEXT NOT NULL,
               results_json TEXT NOT NULL,
               current INTEGER NOT NULL CHECK (current IN (0, 1)))""",
        # at most one current submission per student, enforced by the database itself
        "CREATE UNIQUE INDEX one_current_per_student ON submissions(student) WHERE current = 1",
        "CREATE INDEX submissions_by_student ON submissions(student, id)",
        """CREATE TABLE test_results (
               submission INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
               exercise TEXT NOT NULL,
               test TEXT NOT NULL,
               outcome TEXT NOT NULL,
               weight REAL NOT NULL,
               points REAL NOT NULL,
               message TEXT NOT NULL,
               counterexample TEXT,
               duration_s REAL NOT NULL,
               PRIMARY KEY (submission, exercise, test)) WITHOUT ROWID""",
        """CREATE TABLE problems (
               entry TEXT PRIMARY KEY NOT NULL,
               reason TEXT NOT NULL,
               seen_at TEXT NOT NULL)""",
    )
    for statement in statements:
        db.execute(statement)


# MIGRATIONS[i] takes a gradebook from version i to version i + 1. Append only:
# a released migration is never edited, since gradebooks already carry its result.
MIGRATIONS: tuple[Migration, ...] = (_migration_1, term_tables.migration_2, term_tables.migration_3)


def current_version() -> int:
    """The schema version this code writes (and the newest it can read)."""
    return len(MIGRATIONS)


@dataclass(frozen=True)
class SubmissionRow:
    """One recorded submission, without its results dict."""
    id: int
    student: str
    content_hash: str
    suite_hash: str | None
    graded_at: str
    recorded_at: str
    score: float
    max_score: float
    pending_points: float
    wall_s: float
    tests_s: float
    worker: str
    isolation: dict[str, Any] | None
    current: bool


@dataclass(frozen=True)
class TestRow:
    """One test of a submission, as stored (``points``: what it earned)."""
    __test__ = False  # not a pytest test class, whatever its name
    student: str
    submission: int
    exercise: str
    test: str
    outcome: str
    weight: float
    points: float
    message: str
    counterexample: dict[str, Any] | None
    duration_s: float

    @property
    def test_id(self) -> str:
        return f"{self.exercise}::{self.test}"


_SUBMISSION_COLUMNS = ("id, student, content_hash, suite_hash, graded_at, recorded_at, score, "
                       "max_score, pending_points, wall_s, tests_s, worker, isolation, current")


class Gradebook:
    """A class's gradebook. Make one with ``Gradebook.open(path)``; close it, or use
    it as a context manager. Not thread-safe: one writer process, one thread."""

    def __init__(self, path: Path, db: sqlite3.Connection) -> None:
        self.path = path
        self._db = db

    # ------------------------------------------------------------ opening

    @classmethod
    def open(cls, path: Path) -> Gradebook:
        """Open the gradebook at ``path`` (a new one if there is no file), creating
        its parent folders and bringing its schema up to date.

        Raises GradebookError for a file that is not a SQLite database, a SQLite
        database that is not a torchdrill gradebook, a gradebook written by a newer
        torchdrill, or a migration that fails (the file keeps its old version).
        """
        path = Path(path)
        _check_file(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
        except (OSError, sqlite3.Error) as exc:
            raise GradebookError(_("{path}: cannot open the gradebook: {error}", path=path, error=exc)) from exc
        try:
            _check_identity(path, db)  # reads only: a foreign file is left as it was
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = FULL")
            db.execute("PRAGMA foreign_keys = ON")
            _migrate(path, db)
        except BaseException as exc:
            db.close()
            if isinstance(exc, sqlite3.Error):
                raise GradebookError(_("{path}: cannot open the gradebook: {error}", path=path,
                                       error=exc)) from exc
            raise
        return cls(path, db)

    def close(self) -> None:
        """Close the connection (the last one to close also folds the WAL into the file)."""
        self._db.close()

    def __enter__(self) -> Gradebook:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @contextmanager
    def _transaction(self, doing: str) -> Iterator[sqlite3.Connection]:
        """One write transaction; rolled back whole on any error (``doing`` names
        the write in the error message)."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise GradebookError(_("{path}: cannot {doing}: {error}", path=self.path, doing=doing, error=exc)) from exc
        try:
            yield self._db
        except BaseException as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise GradebookError(_("{path}: cannot {doing}: {error}", path=self.path, doing=doing, error=exc)) from exc
            raise
        else:
            try:
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise GradebookError(_("{path}: cannot {doing}: {error}", path=self.path, doing=doing, error=exc)) from exc

    def transaction(self, doing: str) -> AbstractContextManager[sqlite3.Connection]:
        """One write transaction for the term's tables (``grader.classroom.term_tables``)."""
        return self._transaction(doing)

    @property
    def connection(self) -> sqlite3.Connection:
        """The connection, for the term's readers (``grader.classroom.term_tables``)."""
        return self._db

    # ------------------------------------------------------------ writing

    def record(self, student: str, content_hash: str, results: Results, *,
               wall_s: float, tests_s: float, worker: str,
               times: Mapping[str, SubmissionTime | tuple[str, str]] | None = None) -> int:
        """Record a graded submission as the student's current one; returns its id.

        One transaction: the student (first time only), the submission with its
        whole results dict, one row per test, the student's other submissions made
        not current, the submission times (``times``: assignment -> when, from
        where, how far trusted), and the student's problem (if any) cleared. Recording the same
        content again (``--force``) adds a new current row: history is kept, and the
        current view still has one submission per student.
        """
        try:
            validate(results, f"{self.path}: results for {student!r}")
        except ResultsError as exc:
            raise GradebookError(str(exc)) from None
        now = _now()
        environment = results.get("environment") or {}
        isolation = environment.get("isolation")
        with self._transaction(_("record the submission of {student}", student=repr(student))) as db:
            db.execute("INSERT INTO students (id, first_graded_at) VALUES (?, ?) "
                       "ON CONFLICT (id) DO NOTHING", (student, results.get("graded_at") or now))
            db.execute("UPDATE submissions SET current = 0 WHERE student = ? AND current = 1",
                       (student,))
            cursor = db.execute(
                "INSERT INTO submissions (student, content_hash, suite_hash, graded_at, "
                "recorded_at, isolation, score, max_score, pending_points, wall_s, tests_s, "
                "worker, results_json, current) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)",
                (student, content_hash, results.get("suite_hash"), results.get("graded_at") or now,
                 now, None if isolation is None else json.dumps(isolation, sort_keys=True),
                 float(results["score"]), float(results["max_score"]),
                 float(results.get("pending_points") or 0.0), float(wall_s), float(tests_s),
                 str(worker), _dumps(results)))
            assert cursor.lastrowid is not None  # the INSERT just run made the row
            submission = int(cursor.lastrowid)
            _insert_tests(db, submission, results)
            if times:
                term_tables.record_times(db, student, submission, times, now)
            db.execute("DELETE FROM problems WHERE entry = ?", (student,))
        return submission

    def record_times(self, student: str, times: Mapping[str, SubmissionTime | tuple[str, str]], *,
                     replace: bool = True) -> None:
        """Record when the student handed in each assignment (``replace=False``: only
        where no time is known, or where a trusted time replaces the student's word),
        in one transaction."""
        with self._transaction(_("record the submission times of {student}", student=repr(student))) as db:
            term_tables.record_times(db, student, None, times, _now(), replace=replace)

    def record_problem(self, student: str, reason: str) -> None:
        """Record why an entry (a student's folder or zip) could not be graded: a bad
        zip, an empty folder, a grading process that failed. Replaces an earlier
        problem of the same entry; the student's last good submission stays current."""
        with self._transaction(_("record the problem of {student}", student=repr(student))) as db:
            db.execute("INSERT INTO problems (entry, reason, seen_at) VALUES (?, ?, ?) "
                       "ON CONFLICT (entry) DO UPDATE SET reason = excluded.reason, "
                       "seen_at = excluded.seen_at", (student, reason, _now()))

    def clear_problem(self, student: str) -> None:
        """Forget the problem recorded for an entry (one that reads well now)."""
        with self._transaction(_("clear the problem of {student}", student=repr(student))) as db:
            db.execute("DELETE FROM problems WHERE entry = ?", (student,))

    def merge(self, student: str, incoming: Mapping[str, Any], *,
              content_hash: str | None = None) -> MergeReport:
        """Fold results from another runner (say a CUDA machine's ``cuda`` tests) into
        the student's current submission, test by test (``<exercise id>::<test name>``).

        An incoming real outcome replaces a ``not_run`` one; an incoming ``not_run``
        replaces nothing; a real outcome that differs from a real one already there
        is a conflict (the one there is kept); tests the gradebook does not know are
        reported, not added. Scores are then recomputed (``results.rescore``), and the
        results dict, its test rows and the submission's scores are updated in one
        transaction, with ``environment.merged`` noting where the outcomes came from.
        A merge that replaces nothing writes nothing.

        Refused (GradebookError) when the student has no submission, when the test
        suites differ (or either is unknown), when ``content_hash`` is given and is
        not the current submission's, or when ``incoming`` is not a results dict.
        The rules are ``grader.core.results_json.fold``'s.
        """
        with self._transaction(_("merge results into the submission of {student}", student=repr(student))) as db:
            row = db.execute("SELECT id, content_hash, results_json FROM submissions "
                             "WHERE student = ? AND current = 1", (student,)).fetchone()
            if row is None:
                raise GradebookError(_("{path}: cannot merge into {student}: the student has no graded "
                                       "submission", path=self.path, student=repr(student)))
            submission, stored_hash, text = row
            if content_hash is not None and content_hash != stored_hash:
                raise GradebookError(_(
                    "{path}: cannot merge into {student}: the incoming results are of content {incoming}, "
                    "the current submission is {stored}", path=self.path, student=repr(student),
                    incoming=content_hash, stored=stored_hash))
            try:
                results, report = fold(json.loads(text), incoming, now=_now())
            except ResultsError as exc:
                raise GradebookError(_("{path}: cannot merge into {student}: {error}", path=self.path,
                                       student=repr(student), error=exc)) from exc
            report.submission = submission
            if not report.replaced:
                return report
            db.execute("UPDATE submissions SET score = ?, max_score = ?, pending_points = ?, "
                       "results_json = ? WHERE id = ?",
                       (results["score"], results["max_score"], results["pending_points"],
                        _dumps(results), submission))
            db.execute("DELETE FROM test_results WHERE submission = ?", (submission,))
            _insert_tests(db, submission, results)
        return report

    # ------------------------------------------------------------ reading

    def is_graded(self, student: str, content_hash: str, suite_hash: str | None) -> bool:
        """Whether the student's current submission is this content graded with this
        suite (an unknown suite, None, is never taken as already graded)."""
        if suite_hash is None:
            return False
        row = self._db.execute(
            "SELECT 1 FROM submissions WHERE student = ? AND current = 1 AND content_hash = ? "
            "AND suite_hash = ?", (student, content_hash, suite_hash)).fetchone()
        return row is not None

    def current(self) -> dict[str, Results]:
        """Student id -> results dict of their current submission, sorted by student."""
        rows = self._db.execute("SELECT student, results_json FROM submissions WHERE current = 1 "
                                "ORDER BY student").fetchall()
        return {student: json.loads(text) for student, text in rows}

    def submission_rows(self) -> list[SubmissionRow]:
        """The current submission of each student (timings, worker, hashes), sorted by student."""
        rows = self._db.execute(f"SELECT {_SUBMISSION_COLUMNS} FROM submissions WHERE current = 1 "
                                "ORDER BY student").fetchall()
        return [_submission_row(r) for r in rows]

    def history(self, student: str) -> list[SubmissionRow]:
        """Every submission recorded for the student, oldest first."""
        rows = self._db.execute(f"SELECT {_SUBMISSION_COLUMNS} FROM submissions WHERE student = ? "
                                "ORDER BY id", (student,)).fetchall()
        return [_submission_row(r) for r in rows]

    def results_of(self, submission: int) -> Results:
        """The results dict of one submission (current or not), by id."""
        row = self._db.execute("SELECT results_json FROM submissions WHERE id = ?",
                               (submission,)).fetchone()
        if row is None:
            raise GradebookError(_("{path}: no submission {submission}", path=self.path, submission=submission))
        return json.loads(row[0])

    def test_rows(self) -> list[TestRow]:
        """Every test of every current submission, sorted by student, exercise, test."""
        rows = self._db.execute(
            "SELECT s.student, t.submission, t.exercise, t.test, t.outcome, t.weight, t.points, "
            "t.message, t.counterexample, t.duration_s FROM test_results t "
            "JOIN submissions s ON s.id = t.submission WHERE s.current = 1 "
            "ORDER BY s.student, t.exercise, t.test").fetchall()
        return [_test_row(r) for r in rows]

    def students(self) -> dict[str, str]:
        """Student id -> when their first recorded submission was graded, sorted."""
        return dict(self._db.execute("SELECT id, first_graded_at FROM students ORDER BY id"))

    def problems(self) -> dict[str, str]:
        """Entry (student) -> why it could not be graded, sorted by entry."""
        return dict(self._db.execute("SELECT entry, reason FROM problems ORDER BY entry"))


# ---------------------------------------------------------------- helpers

def _insert_tests(db: sqlite3.Connection, submission: int, results: Results) -> None:
    db.executemany(
        "INSERT INTO test_results (submission, exercise, test, outcome, weight, points, message, "
        "counterexample, duration_s) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(submission, ex["id"], t["name"], t["outcome"], float(t["weight"]), scoring.earned_points(ex, t),
          t.get("message") or "",
          None if t.get("counterexample") is None else _dumps(t["counterexample"]),
          float(t.get("duration_s") or 0.0))
         for ex in results["exercises"] for t in ex["tests"]])


def _check_file(path: Path) -> None:
    """Refuse, without opening it with SQLite, a path that is not a SQLite file."""
    if path.is_dir():
        raise GradebookError(_("{path}: is a folder, not a gradebook file", path=path))
    try:
        with open(path, "rb") as f:
            head = f.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise GradebookError(_("{path}: cannot read the gradebook: {error}", path=path, error=exc)) from exc
    if head and head != SQLITE_HEADER:
        raise GradebookError(_("{path}: is not a torchdrill gradebook (not a SQLite database)", path=path))


def _check_identity(path: Path, db: sqlite3.Connection) -> None:
    """Refuse a SQLite database that is someone else's, or a gradebook that is newer
    than this code. An empty database (a new file) is fine."""
    application_id = db.execute("PRAGMA application_id").fetchone()[0]
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if application_id == 0 and version == 0:
        if db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            raise GradebookError(_("{path}: is a SQLite database but not a torchdrill gradebook", path=path))
        return
    if application_id != APPLICATION_ID:
        raise GradebookError(_("{path}: is a SQLite database but not a torchdrill gradebook "
                               "(application_id {application_id})", path=path,
                               application_id=f"{application_id:#x}"))
    if version > current_version():
        raise GradebookError(_("{path}: was written by a newer torchdrill (gradebook version {version}; "
                               "this torchdrill reads up to {known}); upgrade torchdrill to read it",
                               path=path, version=version, known=current_version()))


def _migrate(path: Path, db: sqlite3.Connection) -> None:
    """Apply the missing migrations, each in one transaction with its version bump."""
    migrations: Sequence[Migration] = MIGRATIONS
    while True:
        db.execute("BEGIN IMMEDIATE")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version >= len(migrations):
            db.execute("COMMIT")
            return
        try:
            migrations[version](db)
            db.execute(f"PRAGMA user_version = {version + 1}")
            db.execute("COMMIT")
        except Exception as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise GradebookError(_("{path}: migrating the gradebook from version {version} to {next} failed "
                                   "(it is left at version {version}): {error}", path=path, version=version,
                                   next=version + 1, error=exc)) from exc


def _submission_row(r: Sequence[Any]) -> SubmissionRow:
    (id_, student, content_hash, suite_hash, graded_at, recorded_at, score, max_score,
     pending_points, wall_s, tests_s, worker) = r[:12]
    return SubmissionRow(id_, student, content_hash, suite_hash, graded_at, recorded_at, score,
                         max_score, pending_points, wall_s, tests_s, worker,
                         isolation=None if r[12] is None else json.loads(r[12]), current=bool(r[13]))


def _test_row(r: Sequence[Any]) -> TestRow:
    student, submission, exercise, test, outcome, weight, points, message = r[:8]
    return TestRow(student, submission, exercise, test, outcome, weight, points, message,
                   None if r[8] is None else json.loads(r[8]), r[9])


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
