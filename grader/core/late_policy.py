"""What a late submission loses: one pure function of (submitted at, due, extension,
policy), so every place that shows a penalty (grades.csv, the reports, Gradescope)
computes it the same way and a test can check it by hand.

The rules, in order:

- at or before the student's due date (their extension's date when they have one,
  else the assignment's), nothing is lost;
- after the late window (counted from that same date), everything is lost: the
  submission came after the last moment it was accepted;
- otherwise the policy decides: ``none`` nothing, ``zero`` everything, ``per_day``
  ``percent`` per day *started* on the assignment's clock (one minute late is one
  day; a day is from a wall-clock time to the same time the next day, 23 or 25
  hours across a DST change), ``per_hour`` per elapsed hour started, both at most
  ``cap`` percent; ``custom`` the course's own function.

A custom policy is the instructor's code, trusted like ``course.toml``: a function
``penalty(submitted_at, due) -> float`` in a ``.py`` file of the course folder,
loaded by path, given aware datetimes (``due`` with the extension applied) and
returning the share lost, from 0 to 1.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from pathlib import Path

from grader.core.assignments import AssignmentError, Policy

Custom = Callable[[datetime, datetime], float]
_loaded: dict[tuple[Path, str], Custom] = {}


@dataclass(frozen=True)
class Lateness:
    """How late a submission is and what share of its points it loses (0 to 1)."""
    late_by: timedelta      # zero when on time
    share: float            # of the points, 0..1
    why: str                # "on time", "2 days late: 20%", "after the late window"


def penalty(submitted_at: datetime, due: datetime, extension: datetime | None, policy: Policy, *,
            zone: tzinfo | None = None, late_window: timedelta | None = None,
            course: Path | None = None) -> Lateness:
    """The share of the points a submission made at ``submitted_at`` loses.

    ``extension``: the student's own due date (replaces ``due``); ``zone``: where
    days are counted (default: ``due``'s own zone); ``late_window``: how long after
    the (extended) due date a submission is still accepted; ``course``: the folder
    a custom policy's path is relative to. All datetimes must be aware."""
    for name, value in (("submitted_at", submitted_at), ("due", due), ("extension", extension)):
        if value is not None and value.utcoffset() is None:
            raise ValueError(f"{name} must carry a time zone: {value!r}")
    deadline = extension or due
    late = submitted_at - deadline
    if late <= timedelta(0):
        return Lateness(timedelta(0), 0.0, "on time")
    words = late_text(late)
    if late_window is not None and late > late_window:
        return Lateness(late, 1.0, f"{words} late, after the late window of {late_text(late_window)}")
    if policy.kind == "none":
        return Lateness(late, 0.0, f"{words} late, no late penalty")
    if policy.kind == "zero":
        return Lateness(late, 1.0, f"{words} late, no points after the due date")
    if policy.kind == "custom":
        function = load_custom(course or Path.cwd(), policy)
        share = function(submitted_at, deadline)
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1:
            raise AssignmentError(f"late policy {policy.path}:{policy.function} returned {share!r}, "
                                  "not a share from 0 to 1")
        return Lateness(late, float(share), f"{words} late, {_percent(share)} by the course's rule")
    if policy.kind == "per_day":
        clock = zone or deadline.tzinfo
        local = submitted_at.astimezone(clock).replace(tzinfo=None) - deadline.astimezone(clock).replace(tzinfo=None)
        units, unit = math.ceil(local / timedelta(days=1)), "day"
    else:
        units, unit = math.ceil(late / timedelta(hours=1)), "hour"
    units = max(units, 1)  # late at all is one started unit, even where a DST fold makes the clock go back
    share = min(policy.percent * units, policy.cap) / 100
    return Lateness(late, share, f"{words} late, {units} {unit}{'s' if units != 1 else ''} "
                                 f"× {policy.percent:g}%" + (f" (capped at {policy.cap:g}%)"
                                                             if policy.percent * units > policy.cap else "")
                    + f": {_percent(share)}")


def load_custom(course: Path, policy: Policy) -> Custom:
    """The custom policy's function, loaded once per process from the course folder."""
    path = (course / policy.path).resolve()
    key = (path, policy.function)
    if key not in _loaded:
        spec = importlib.util.spec_from_file_location(f"torchdrill_late_policy_{len(_loaded)}", path)
        if spec is None or spec.loader is None:
            raise AssignmentError(f"late policy {path} cannot be loaded")
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except (OSError, SyntaxError) as exc:
            raise AssignmentError(f"late policy {path} cannot be loaded: {exc}") from None
        function = getattr(module, policy.function, None)
        if not callable(function):
            raise AssignmentError(f"late policy {path} defines no function {policy.function}")
        _loaded[key] = function
    return _loaded[key]


def late_text(late: timedelta) -> str:
    """``1 day 2 h``, ``3 h 5 min``, ``40 s``: how late, for people."""
    seconds = int(late.total_seconds())
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{days} day{'s' if days != 1 else ''}" if days else "", f"{hours} h" if hours else "",
             f"{minutes} min" if minutes and not days else ""]
    text = " ".join(p for p in parts if p)
    return text or f"{secs} s"


def _percent(share: float) -> str:
    return f"{round(share * 100, 2):g}%"
