"""When each submission was handed in, read from where a course keeps it.

``grade-all`` looks, for each entry, in this order:

1. a CSV given with ``--times FILE``: rows ``student,time`` (a header row whose
   second cell is not a time is skipped);
2. nbgrader's ``timestamp.txt``: ``alice/timestamp.txt`` inside a folder entry, or
   ``alice.timestamp.txt`` beside any entry (a zip, a notebook, a folder);
3. with ``--times zip``, the newest modification time among a zip's members.

A time is ISO 8601 (``2026-09-14T23:59:00-04:00``, ``...Z``), or nbgrader's
``2026-09-14 23:59:00.123456 UTC``; one without an offset is on the course's clock
(``[term] timezone``). A zip stores its members' times without a zone, so those are
read on the course's clock too. A time that cannot be read is the instructor's
problem to fix, not a student's: it stops ``grade-all`` with the file and line.
"""

from __future__ import annotations

import csv
import io
import re
from datetime import datetime, tzinfo
from pathlib import Path

from grader.core.errors import UsageError
from grader.core.i18n import _
from grader.intake.archives import SubmissionProblem, open_zip
from grader.intake.reader import TIMESTAMP_FILE, TIMESTAMP_SUFFIX, Entry

ZIP_TIMES = "zip"  # ``--times zip``
_ZONE_NAME = re.compile(r"\s+(UTC|GMT|Z)$", re.IGNORECASE)
MAX_TIMESTAMP_BYTES = 1024


class TimesError(UsageError):
    """A submission time that cannot be read; the message names the file."""


def parse_time(text: str, zone: tzinfo, where: str) -> datetime:
    """An aware datetime from ``text`` (see the module's docstring)."""
    cleaned = _ZONE_NAME.sub("+00:00", text.strip())
    try:
        when = datetime.fromisoformat(cleaned)
    except ValueError:
        raise TimesError(_("{where}: {text} is not a date and time (e.g. 2026-09-14T23:59:00-04:00 or "
                           "2026-09-14 23:59:00 UTC)", where=where, text=repr(text.strip()))) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=zone)


def read_csv(path: Path, zone: tzinfo) -> dict[str, datetime]:
    """Student -> time from a ``student,time`` CSV."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise TimesError(_("--times {path}: cannot read it ({error})", path=path, error=exc)) from None
    times: dict[str, datetime] = {}
    for number, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row or not any(cell.strip() for cell in row):
            continue
        if len(row) < 2:
            raise TimesError(_("{path}, line {number}: expected student,time", path=path, number=number))
        student, stamp = row[0].strip(), row[1].strip()
        if number == 1 and not stamp[:1].isdigit():
            continue  # a header
        times[student] = parse_time(stamp, zone, _("{path}, line {number}", path=path, number=number))
    return times


def entry_time(entry: Entry, zone: tzinfo, table: dict[str, datetime] | None = None,
               use_zip: bool = False) -> tuple[datetime, str] | None:
    """When ``entry`` was handed in and where that was read, or None when nowhere says."""
    if table is not None and entry.student in table:
        return table[entry.student], "--times"
    for candidate in (entry.source.parent / f"{entry.student}{TIMESTAMP_SUFFIX}",
                      entry.source / TIMESTAMP_FILE if entry.kind == "folder" else None):
        if candidate is not None and candidate.is_file() and not candidate.is_symlink():
            try:
                with open(candidate, "rb") as f:
                    text = f.read(MAX_TIMESTAMP_BYTES).decode("utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise TimesError(_("{path}: cannot read it ({error})", path=candidate, error=exc)) from None
            return parse_time(text, zone, str(candidate)), candidate.name
    if use_zip and entry.kind == "zip":
        try:  # opened as the intake opens a zip: no link followed, its directory's size checked first
            with open_zip(entry.source, entry.label) as zf:
                stamps = [info.date_time for info in zf.infolist() if not info.is_dir()]
        except SubmissionProblem:
            return None  # the entry's own problem, reported by the intake
        if stamps:
            return datetime(*max(stamps), tzinfo=zone), "zip"
    return None
