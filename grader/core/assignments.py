"""A term's assignments: ``[[assignments]]`` in ``course.toml``, read and checked.

An assignment is a set of drills with a due date, an optional late window and a
late policy (``grader.core.late_policy`` computes what a late submission loses).
Everything is checked when the course is read, so a typo in a due date stops
``grade-all`` before any grading, with a message naming the file, the assignment
and the key::

    [term]
    timezone = "America/New_York"   # due dates written without an offset are in it

    [[assignments]]
    name = "week1"
    drills = ["tensors/contiguity", "tensors/broadcast"]
    due = 2026-09-14T23:59:00        # TOML datetime, or a string with an offset
    late_window = "3d"               # accepted until 3 days after the due date
    late_policy = { kind = "per_day", percent = 10, cap = 50 }

A course without ``[[assignments]]`` has no due dates: nothing is ever late.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from grader.core.errors import UsageError

COURSE_FILE = "course.toml"
POLICY_KINDS = ("none", "zero", "per_day", "per_hour", "custom")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(d|h|m|days?|hours?|minutes?)\s*$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class AssignmentError(UsageError):
    """``course.toml``'s assignments cannot be read; the message names the file, the
    assignment and the key."""


@dataclass(frozen=True)
class Policy:
    """What a late submission loses. ``percent`` per started day (``per_day``: days
    on the assignment's clock, so a DST change does not move the boundary) or per
    started hour (``per_hour``: elapsed hours), at most ``cap`` percent;
    ``custom`` calls ``function`` in ``path`` (relative to the course folder)."""
    kind: str = "none"
    percent: float = 0.0
    cap: float = 100.0
    path: str = ""
    function: str = "penalty"

    def describe(self) -> str:
        """The rule in words, for reports."""
        if self.kind == "none":
            return "no late penalty"
        if self.kind == "zero":
            return "no points after the due date"
        if self.kind == "custom":
            return f"the course's own rule ({self.path}:{self.function})"
        unit = "day" if self.kind == "per_day" else "hour"
        capped = f", at most {self.cap:g}%" if self.cap < 100 else ""
        return f"{self.percent:g}% per {unit} started{capped}"


@dataclass(frozen=True)
class Assignment:
    name: str
    title: str
    drills: tuple[str, ...]
    due: datetime                        # aware
    zone: tzinfo                         # where its days are counted
    late_window: timedelta | None = None  # None: late submissions accepted whenever they come
    policy: Policy = field(default_factory=Policy)


def load(root: Path) -> tuple[Assignment, ...]:
    """The assignments of the course at ``root`` (none without ``course.toml``)."""
    path = root / COURSE_FILE
    if not path.is_file():
        return ()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise AssignmentError(f"cannot read {path}: {exc}") from None
    return parse(path, data)


def term_zone(root: Path) -> tzinfo:
    """The course's clock (``[term] timezone``; UTC without one): times written
    without an offset are read on it."""
    path = root / COURSE_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise AssignmentError(f"cannot read {path}: {exc}") from None
    term = data.get("term", {})
    return _zone(path, "[term]", term.get("timezone", "UTC") if isinstance(term, dict) else "UTC")


def parse(path: Path, data: dict[str, Any]) -> tuple[Assignment, ...]:
    """The assignments of a parsed ``course.toml`` (``path`` names it in errors)."""
    term = data.get("term", {})
    if not isinstance(term, dict):
        raise AssignmentError(f"{path}: 'term' must be a table ([term])")
    default_zone = _zone(path, "[term]", term.get("timezone", "UTC"))
    raw = data.get("assignments", [])
    if not isinstance(raw, list):
        raise AssignmentError(f"{path}: 'assignments' must be a list of tables ([[assignments]])")
    assignments = [_assignment(path, i, a, default_zone) for i, a in enumerate(raw)]
    names = [a.name for a in assignments]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise AssignmentError(f"{path}: assignment {', '.join(twice)} is named more than once")
    drills = [d for a in assignments for d in a.drills]
    shared = sorted({d for d in drills if drills.count(d) > 1})
    if shared:
        raise AssignmentError(f"{path}: drill {', '.join(shared)} is in more than one assignment")
    return tuple(assignments)


def _assignment(path: Path, index: int, data: Any, default_zone: tzinfo) -> Assignment:
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) \
            or not _NAME.match(data["name"]):
        raise AssignmentError(f"{path}: assignment {index + 1} needs a name (letters, digits, '._-')")
    name = data["name"]
    where = f"{path}: assignment {name}"
    known = {"name", "title", "drills", "due", "timezone", "late_window", "late_policy"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise AssignmentError(f"{where}: unknown key {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    drills = data.get("drills")
    if not isinstance(drills, list) or not drills or not all(isinstance(d, str) and d for d in drills):
        raise AssignmentError(f"{where}: 'drills' must be a non-empty list of drill ids")
    zone = _zone(path, f"assignment {name}", data["timezone"]) if "timezone" in data else default_zone
    if "due" not in data:
        raise AssignmentError(f"{where}: 'due' is missing (a date and time, e.g. 2026-09-14T23:59:00)")
    due = _due(where, data["due"], zone)
    window = None
    if data.get("late_window") is not None:
        window = duration(data["late_window"], f"{where}: 'late_window'")
    return Assignment(name, str(data.get("title") or name), tuple(drills), due, zone, window,
                      _policy(path, where, data.get("late_policy", "none")))


def _zone(path: Path, where: str, name: Any) -> tzinfo:
    if not isinstance(name, str):
        raise AssignmentError(f"{path}: {where} 'timezone' must be a name like \"Europe/Paris\"")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise AssignmentError(f"{path}: {where} 'timezone' {name!r} is no IANA time zone "
                              "(e.g. \"America/New_York\", \"UTC\")") from None


def _due(where: str, value: Any, zone: tzinfo) -> datetime:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise AssignmentError(f"{where}: 'due' {value!r} is not a date and time "
                                  "(e.g. 2026-09-14T23:59:00 or 2026-09-14T23:59:00-04:00)") from None
    elif isinstance(value, date) and not isinstance(value, datetime):
        value = datetime.combine(value, time(23, 59, 59))  # a bare date: due at the end of that day
    if not isinstance(value, datetime):
        raise AssignmentError(f"{where}: 'due' must be a date and time, not {value!r}")
    return value if value.tzinfo is not None else localize(value, zone)


def localize(naive: datetime, zone: tzinfo) -> datetime:
    """A wall-clock time in ``zone``; a time a DST change skips or repeats takes the
    earlier reading (``fold=0``), as a clock on the wall would show it first."""
    return naive.replace(tzinfo=zone, fold=0)


def duration(value: Any, where: str) -> timedelta:
    """``"3d"``, ``"36h"``, ``"90m"`` (or a number of hours) as a timedelta."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return timedelta(hours=value)
    match = _DURATION.match(value) if isinstance(value, str) else None
    if match is None:
        raise AssignmentError(f"{where} must be a duration like \"3d\", \"36h\" or \"90m\", not {value!r}")
    amount, unit = float(match.group(1)), match.group(2)[0]
    return {"d": timedelta(days=amount), "h": timedelta(hours=amount), "m": timedelta(minutes=amount)}[unit]


def _policy(path: Path, where: str, value: Any) -> Policy:
    if isinstance(value, str):
        value = {"kind": value}
    if not isinstance(value, dict):
        raise AssignmentError(f"{where}: 'late_policy' must be a kind or a table "
                              "({ kind = \"per_day\", percent = 10, cap = 50 })")
    kind = value.get("kind")
    if kind not in POLICY_KINDS:
        raise AssignmentError(f"{where}: 'late_policy' kind must be one of {', '.join(POLICY_KINDS)}, "
                              f"not {kind!r}")
    allowed = {"none": set(), "zero": set(), "per_day": {"percent", "cap"}, "per_hour": {"percent", "cap"},
               "custom": {"path", "function"}}[kind] | {"kind"}
    extra = sorted(set(value) - allowed)
    if extra:
        raise AssignmentError(f"{where}: 'late_policy' of kind {kind} takes no {', '.join(extra)}")
    if kind in ("per_day", "per_hour"):
        percent, cap = value.get("percent"), value.get("cap", 100)
        for key, number in (("percent", percent), ("cap", cap)):
            if isinstance(number, bool) or not isinstance(number, (int, float)) or not 0 <= number <= 100:
                raise AssignmentError(f"{where}: 'late_policy' {key} must be a number from 0 to 100, "
                                      f"not {number!r}")
        return Policy(kind, float(percent), float(cap))  # type: ignore[arg-type]  # checked just above
    if kind == "custom":
        file, function = value.get("path"), value.get("function", "penalty")
        if not isinstance(file, str) or not file.endswith(".py"):
            raise AssignmentError(f"{where}: 'late_policy' path must name a .py file in the course folder")
        if not (path.parent / file).is_file():
            raise AssignmentError(f"{where}: 'late_policy' path {file} is not a file in {path.parent}")
        if not isinstance(function, str) or not function.isidentifier():
            raise AssignmentError(f"{where}: 'late_policy' function must be a Python name")
        return Policy(kind, path=file, function=function)
    return Policy(kind)


def check_drills(assignments: tuple[Assignment, ...], known: list[str], path: Path) -> None:
    """Refuse an assignment that names a drill the course does not have."""
    for a in assignments:
        missing = [d for d in a.drills if d not in known]
        if missing:
            raise AssignmentError(f"{path}: assignment {a.name}: 'drills' names {', '.join(missing)}, "
                                  "which the course does not have")
