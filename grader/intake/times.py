"""When each submission was handed in, where that was read, and how far it is trusted.

``grade-all`` looks, for each entry, in this order; the first source that names the
entry decides:

1. a CSV given with ``--times FILE``: rows ``student,time`` (a header row whose
   second cell is not a time is skipped). Trusted: the instructor's word.
2. nbgrader's ``alice.timestamp.txt`` beside the entry, in the submissions folder,
   however the entry is packed (a folder, ``alice.zip``, ``alice.ipynb``, a folder
   ``alice/`` holding one zip). Trusted: the instructor's side of the exchange.
3. only with ``--student-timestamps``: ``alice/timestamp.txt`` inside a folder entry
   (where nbgrader's collect leaves the file its submit wrote on the student's
   machine). The student's word, recorded as such
   (``grader.core.term_grades.STUDENTS_WORD``).

Nothing else inside a submission is ever read for a time: a zip's member dates are
whatever the student's zip tool wrote (``--times zip`` is refused), and a file the
student named like the instructor's (``mallory/mallory.timestamp.txt``) is theirs.

A time is ISO 8601 (``2026-09-14T23:59:00-04:00``, ``...Z``), or nbgrader's
``2026-09-14 23:59:00.123456 UTC``; one without an offset is on the course's clock
(``[term] timezone``); it lies between 1970 and 2999. A time that cannot be read
(not a date, an impossible or out-of-range one, a file that is a link, a folder, a
FIFO, over 1 KiB or not UTF-8, a bad row of the CSV) is that entry's problem
(``TimeProblem``): the caller reports it for that student, who is graded with no time,
and no later source is tried (the student's own file never stands in for the
instructor's broken one). Only the CSV as a whole (unreadable) and ``--times zip``
stop ``grade-all`` (``TimesError``, a usage error).
"""

from __future__ import annotations

import csv
import difflib
import io
import os
import re
import stat
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from pathlib import Path

from grader.core.errors import UsageError
from grader.core.i18n import _
from grader.core.students import Lookalikes, student_name
from grader.core.term_grades import STUDENTS_WORD, TRUSTED, SubmissionTime
from grader.intake.reader import TIMESTAMP_FILE, TIMESTAMP_SUFFIX, Entry

ZIP_TIMES = "zip"  # what ``--times zip`` asked for before: refused, with the reason
_ZONE_NAME = re.compile(r"\s+(UTC|GMT|Z)$", re.IGNORECASE)
MAX_TIMESTAMP_BYTES = 1024
EARLIEST_YEAR, LATEST_YEAR = 1970, 2999  # a submission time outside these years is a mistake
_SHOWN = 60  # characters of an unreadable time quoted in its problem
_NO_FOLLOW, _NO_BLOCK, _CLOSE_ON_EXEC = (getattr(os, flag, 0) for flag in ("O_NOFOLLOW", "O_NONBLOCK", "O_CLOEXEC"))


class TimesError(UsageError):
    """``--times`` as a whole cannot be used: the message names the file and why."""


class TimeProblem(Exception):
    """One entry's time cannot be read: the message names the file (or CSV line) and why."""


@dataclass(frozen=True)
class Found:
    """A submission time: when, precisely where it was read, and its trust."""

    when: datetime
    source: str  # ``alice.timestamp.txt``, ``alice/timestamp.txt``, ``times.csv, line 3``
    trust: str  # grader.core.term_grades.TRUSTED or STUDENTS_WORD

    def recorded(self) -> SubmissionTime:
        """As the gradebook and the term grade keep it."""
        return SubmissionTime(self.when.isoformat(), self.source, self.trust)


@dataclass
class Table:
    """The rows of a ``--times`` CSV: student -> time, or -> the problem of their rows."""

    name: str
    times: dict[str, Found] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # rows that name no student
    # The first row, skipped as a header: (its first cell, its second, where). Should
    # the first cell be a student's id, it was that student's row after all.
    header: tuple[str, str, str] | None = None


def parse_time(text: str, zone: tzinfo, where: str) -> datetime:
    """An aware datetime from ``text`` (see the module's docstring); ``TimeProblem``
    naming ``where`` when it is none."""
    cleaned = _ZONE_NAME.sub("+00:00", text.strip())
    shown = repr(text.strip() if len(text.strip()) <= _SHOWN else text.strip()[:_SHOWN] + "…")
    try:
        when = datetime.fromisoformat(cleaned)
    except ValueError:
        raise TimeProblem(_("{where}: {text} is not a date and time (e.g. 2026-09-14T23:59:00-04:00 or "
                            "2026-09-14 23:59:00 UTC)", where=where, text=shown)) from None
    when = when if when.tzinfo is not None else when.replace(tzinfo=zone)
    try:  # on every clock a report shows it on
        when.astimezone(zone)
        year: int | None = when.astimezone(UTC).year
    except (OverflowError, ValueError):
        year = None
    if year is None or not EARLIEST_YEAR <= year <= LATEST_YEAR:
        raise TimeProblem(_("{where}: {text} is out of range (a submission time lies between {earliest} and "
                            "{latest})", where=where, text=shown, earliest=EARLIEST_YEAR, latest=LATEST_YEAR))
    return when


def read_option(value: str, zone: tzinfo) -> Table:
    """``--times VALUE``: the CSV's table; ``--times zip`` is refused, saying why."""
    if value == ZIP_TIMES:
        raise TimesError(_("--times zip is no longer read: a zip's member dates are whatever the student's "
                           "machine wrote (any zip tool backdates them), so they are never a submission time. "
                           "Give --times FILE (a CSV of student,time from your platform), or put nbgrader's "
                           "ID.timestamp.txt beside each entry (a file named zip: --times ./zip)"))
    return read_csv(Path(value), zone)


def read_csv(path: Path, zone: tzinfo) -> Table:
    """The ``student,time`` CSV at ``path``. A file that cannot be read at all is a
    ``TimesError``; a bad row is its student's problem, a student named twice with
    two times too."""
    try:
        text = path.read_text(encoding="utf-8-sig")
        rows = list(csv.reader(io.StringIO(text)))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise TimesError(_("--times {path}: cannot read it ({error})", path=path, error=exc)) from None
    table = Table(path.name)
    lines: dict[str, int] = {}
    first = True
    for number, row in enumerate(rows, start=1):
        if not row or not any(cell.strip() for cell in row):
            continue
        where = _("{path}, line {number}", path=table.name, number=number)
        student, stamp = student_name(row[0].strip()), (row[1].strip() if len(row) > 1 else "")
        if first and not stamp[:1].isdigit():
            first = False
            table.header = (student, stamp, where)
            continue
        first = False
        if not student:
            table.warnings.append(_("{where}: no student named", where=where))
            continue
        if student in table.problems:
            continue  # the first problem stands
        if len(row) < 2:
            table.problems[student] = _("{where}: expected student,time", where=where)
            continue
        try:
            found = Found(parse_time(stamp, zone, where), where, TRUSTED)
        except TimeProblem as exc:
            table.problems[student] = str(exc)
            table.times.pop(student, None)
            continue
        earlier = table.times.get(student)
        if earlier is None:
            table.times[student], lines[student] = found, number
        elif earlier.when != found.when:
            table.problems[student] = _(
                "{path}, lines {first} and {second} give {student} two different times ({one}, {other}): "
                "keep one", path=table.name, first=lines[student], second=number, student=student,
                one=earlier.when.isoformat(), other=found.when.isoformat())
            del table.times[student]
    return table


class Reader:
    """Each entry's time, read from the sources of the module's docstring.

    ``submissions``: the folder ``discover`` read the entries from (the files beside
    them are looked up there, whatever is inside); ``table``: ``--times``' rows;
    ``student_files``: also read a folder entry's own ``timestamp.txt``
    (``--student-timestamps``)."""

    def __init__(self, submissions: Path, zone: tzinfo, table: Table | None = None, *,
                 student_files: bool = False):
        self.submissions, self.zone, self.table = submissions, zone, table
        self.student_files = student_files
        self._beside: dict[str, list[str]] | None = None
        self._named_index: tuple[list[str], Lookalikes] | None = None

    def time_of(self, entry: Entry) -> Found | None:
        """When ``entry`` was handed in, or None when no source names it; raises
        ``TimeProblem`` when the first source that names it cannot be read."""
        if self.table is not None:
            if entry.student in self.table.problems:
                raise TimeProblem(self.table.problems[entry.student])
            if entry.student in self.table.times:
                return self.table.times[entry.student]
            if self.table.header is not None and self.table.header[0] == entry.student:
                _student, stamp, where = self.table.header  # no header: a row without a time
                return Found(parse_time(stamp, self.zone, where), where, TRUSTED)
        names = self.beside().get(entry.student, [])
        if len(names) > 1:
            raise TimeProblem(_("{files}: more than one file gives {student}'s time: keep one",  # ascii: they
                                files=", ".join(map(ascii, sorted(names))), student=entry.student))  # look alike
        if names:
            return self._read(self.submissions / names[0], names[0], TRUSTED)
        top = self._top(entry)
        if self.student_files and stat.S_ISDIR(_mode(top, top.name)):
            found = self._read(top / TIMESTAMP_FILE, f"{top.name}/{TIMESTAMP_FILE}", STUDENTS_WORD)
            if found is not None:
                return found
        if self.table is not None or self.beside():
            raise TimeProblem(self._none_for(entry.student))
        return None

    def _none_for(self, student: str) -> str:
        """Why ``student`` has no time where others have one: no row or file names them
        (an id typed otherwise, in case or with a look-alike letter, is suggested)."""
        named, index = self._named()
        like = [*index.like(student), *difflib.get_close_matches(student, named, n=2, cutoff=0.8)]
        where = (_("{path} and the files beside the entries", path=self.table.name) if self.table and self.beside()
                 else self.table.name if self.table else _("the files beside the entries"))
        if like:
            return _("no time for {student}: {where} name none by this id (did you mean {names}?)",
                     student=student, where=where, names=", ".join(map(ascii, dict.fromkeys(like))))
        return _("no time for {student}: {where} name none by this id", student=student, where=where)

    def _named(self) -> tuple[list[str], Lookalikes]:
        """The ids the times name, sorted, and their look-alike index: built once per run,
        not once per entry without a time (each id's skeleton is read once)."""
        if self._named_index is None:
            named = sorted({*self.beside(), *((self.table.times.keys() | self.table.problems.keys())
                                                if self.table else ())})
            self._named_index = (named, Lookalikes(named))
        return self._named_index

    def beside(self) -> dict[str, list[str]]:
        """Student id (composed, as ``discover`` gives it) -> the names of the
        ``ID.timestamp.txt`` files in the submissions folder that give it."""
        if self._beside is None:
            self._beside = {}
            try:
                names = sorted(child.name for child in self.submissions.iterdir())
            except OSError:
                names = []
            for name in names:
                stem = name[: -len(TIMESTAMP_SUFFIX)]
                if name.endswith(TIMESTAMP_SUFFIX) and stem and not name.startswith("."):
                    self._beside.setdefault(student_name(stem), []).append(name)
        return self._beside

    def unused(self, students: Collection[str]) -> list[str]:
        """Sentences for the times that name no entry among ``students`` (a typo in an
        id, a student who handed nothing in)."""
        found = []
        if self.table is not None:
            found += [_("{path} names {student}, who has no entry", path=self.table.name, student=student)
                      for student in sorted({*self.table.times, *self.table.problems} - set(students))]
        found += [_("{file} names no entry", file=name)
                  for student, names in sorted(self.beside().items()) if student not in students for name in names]
        return found

    def _top(self, entry: Entry) -> Path:
        """The child of the submissions folder ``entry`` is (or is inside: a folder
        holding one zip)."""
        try:
            return self.submissions / entry.source.relative_to(self.submissions).parts[0]
        except (ValueError, IndexError):
            return entry.source

    def _read(self, path: Path, label: str, trust: str) -> Found | None:
        text = read_small(path, label)
        return None if text is None else Found(parse_time(text, self.zone, label), label, trust)


def read_small(path: Path, label: str) -> str | None:
    """The text of a timestamp file, None when there is none; never follows a link,
    never opens what is not a regular file (a FIFO would block), reads at most
    ``MAX_TIMESTAMP_BYTES`` + 1 bytes."""
    mode = _mode(path, label)
    if mode == 0:
        return None
    if stat.S_ISLNK(mode):
        raise TimeProblem(_("{file} is a symbolic link: not read (a timestamp file must be a regular file)",
                            file=label))
    if not stat.S_ISREG(mode):
        raise TimeProblem(_("{file} is not a regular file: not read", file=label))
    try:
        fd = os.open(path, os.O_RDONLY | _NO_FOLLOW | _NO_BLOCK | _CLOSE_ON_EXEC)
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise TimeProblem(_("{file} is not a regular file: not read", file=label))
            data = f.read(MAX_TIMESTAMP_BYTES + 1)
    except OSError as exc:
        raise TimeProblem(_("{file}: cannot read it ({error})", file=label, error=exc.strerror or exc)) from None
    if len(data) > MAX_TIMESTAMP_BYTES:
        raise TimeProblem(_("{file} holds more than 1 KiB, which no timestamp does: not read", file=label))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise TimeProblem(_("{file} is not UTF-8 text: not read", file=label)) from None


def _mode(path: Path, label: str) -> int:
    """``path``'s mode, the link's own for a link; 0 when there is nothing there."""
    try:
        return os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return 0
    except OSError as exc:
        raise TimeProblem(_("{file}: cannot read it ({error})", file=label, error=exc.strerror or exc)) from None
