"""Due dates and late penalties, checked against hand calculations: the assignments
of ``course.toml`` (``grader.core.assignments``) and the one penalty function
(``grader.core.late_policy``), time zones and DST changes included."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from grader.core import assignments
from grader.core.assignments import AssignmentError, Policy
from grader.core.late_policy import late_text, penalty

NY = ZoneInfo("America/New_York")
PER_DAY = Policy("per_day", percent=10, cap=50)
DUE = datetime(2026, 9, 14, 23, 59, tzinfo=NY)  # EDT, -04:00


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


@pytest.mark.parametrize(("submitted", "share"), [
    ("2026-09-14T23:59:00-04:00", 0.0),   # at the due date: on time
    ("2026-09-15T03:59:00+00:00", 0.0),   # the same instant in UTC
    ("2026-09-15T04:00:00+00:00", 0.1),   # one minute late: one day started, 10%
    ("2026-09-15T00:30:00-04:00", 0.1),
    ("2026-09-15T23:59:00-04:00", 0.1),   # exactly one day late
    ("2026-09-16T00:00:00-04:00", 0.2),   # one day and a minute: two days started
    ("2026-09-17T12:00:00-04:00", 0.3),   # 2 days 12 h 1 min: three days
    ("2026-09-21T12:00:00-04:00", 0.5),   # 7 days: 70%, capped at 50%
])
def test_per_day_counts_started_days_and_stops_at_the_cap(submitted, share):
    assert penalty(at(submitted), DUE, None, PER_DAY).share == pytest.approx(share)


def test_days_are_counted_on_the_assignments_clock_across_dst():
    # Due Saturday 2026-03-07 23:00 EST (-05:00); clocks jump to EDT at 02:00 on the 8th.
    due = datetime(2026, 3, 7, 23, 0, tzinfo=NY)
    sunday_late_evening = at("2026-03-08T23:30:00-04:00")  # 23.5 h later, but past 23:00 next day
    assert sunday_late_evening - due == timedelta(hours=23, minutes=30)
    assert penalty(sunday_late_evening, due, None, PER_DAY).share == pytest.approx(0.2)  # 2 days started
    assert penalty(at("2026-03-08T22:30:00-04:00"), due, None, PER_DAY).share == pytest.approx(0.1)
    per_hour = Policy("per_hour", percent=1, cap=100)
    assert penalty(sunday_late_evening, due, None, per_hour).share == pytest.approx(0.24)  # 23.5 h: 24 started
    # Fall back: due 2026-10-31 23:00 EDT; 2026-11-01 22:30 EST is 24.5 h later but before 23:00.
    due = datetime(2026, 10, 31, 23, 0, tzinfo=NY)
    late = at("2026-11-01T22:30:00-05:00")
    assert penalty(late, due, None, PER_DAY).share == pytest.approx(0.1)
    assert penalty(late, due, None, per_hour).share == pytest.approx(0.25)


def test_the_late_window_and_an_extension():
    window = timedelta(days=3)
    assert penalty(at("2026-09-17T23:59:00-04:00"), DUE, None, PER_DAY, late_window=window).share == 0.3
    after = penalty(at("2026-09-18T00:00:00-04:00"), DUE, None, PER_DAY, late_window=window)
    assert after.share == 1.0 and "after the late window" in after.why
    extended = datetime(2026, 9, 16, 23, 59, tzinfo=NY)
    assert penalty(at("2026-09-16T20:00:00-04:00"), DUE, extended, PER_DAY, late_window=window).share == 0.0
    # the window counts from the extension: 3 days 1 min after the class's due date, 1 day 1 min after hers
    assert penalty(at("2026-09-18T00:00:00-04:00"), DUE, extended, PER_DAY, late_window=window).share == 0.2


def test_none_zero_and_a_custom_policy(tmp_path: Path):
    late = at("2026-09-15T04:59:00-04:00")  # 5 hours late
    assert penalty(late, DUE, None, Policy("none")).share == 0.0
    assert penalty(late, DUE, None, Policy("none"), late_window=timedelta(hours=1)).share == 1.0
    assert penalty(late, DUE, None, Policy("zero")).share == 1.0
    (tmp_path / "late.py").write_text(
        "def penalty(submitted_at, due):\n"
        "    return min(0.5, (submitted_at - due).total_seconds() / 3600 / 100)\n"
        "def broken(submitted_at, due):\n    return 2\n")
    custom = penalty(late, DUE, None, Policy("custom", path="late.py"), course=tmp_path)
    assert custom.share == pytest.approx(0.05) and "course's rule" in custom.why
    with pytest.raises(AssignmentError, match="returned 2"):
        penalty(late, DUE, None, Policy("custom", path="late.py", function="broken"), course=tmp_path)
    with pytest.raises(ValueError, match="time zone"):
        penalty(datetime(2026, 9, 15), DUE, None, PER_DAY)


def test_late_text():
    assert late_text(timedelta(days=2, hours=12, minutes=1)) == "2 days 12 h"
    assert late_text(timedelta(hours=3, minutes=5)) == "3 h 5 min"
    assert late_text(timedelta(seconds=40)) == "40 s"


COURSE = """
[term]
timezone = "America/New_York"

[[assignments]]
name = "week1"
drills = ["t/a", "t/b"]
due = 2026-09-14T23:59:00
late_window = "3d"
late_policy = { kind = "per_day", percent = 10, cap = 50 }

[[assignments]]
name = "week2"
drills = ["t/c"]
due = "2026-09-21T23:59:00+02:00"
timezone = "Europe/Paris"
late_policy = "zero"
"""


def test_course_toml_assignments_are_read(tmp_path: Path):
    (tmp_path / "course.toml").write_text(COURSE)
    week1, week2 = assignments.load(tmp_path)
    assert week1.due == DUE and week1.due.utcoffset() == timedelta(hours=-4)
    assert week1.late_window == timedelta(days=3) and week1.policy == PER_DAY
    assert week2.due.utcoffset() == timedelta(hours=2) and week2.policy.kind == "zero"
    assert week2.zone == ZoneInfo("Europe/Paris") and week2.late_window is None
    assert assignments.term_zone(tmp_path) == NY


@pytest.mark.parametrize(("change", "message"), [
    (('timezone = "America/New_York"', 'timezone = "Mars/Olympus"'), "'timezone' 'Mars/Olympus' is no IANA"),
    (("due = 2026-09-14T23:59:00", 'due = "next monday"'), "assignment week1: 'due' 'next monday'"),
    (('late_window = "3d"', 'late_window = "three days"'), "assignment week1: 'late_window' must be"),
    (('kind = "per_day"', 'kind = "weekly"'), "assignment week1: 'late_policy' kind must be"),
    (("percent = 10", "percent = 150"), "assignment week1: 'late_policy' percent must be"),
    (('late_policy = "zero"', 'late_policy = { kind = "custom", path = "nope.py" }'), "path nope.py is not a file"),
    (('drills = ["t/c"]', 'drills = ["t/b"]'), "drill t/b is in more than one assignment"),
    (('name = "week2"', 'name = "week2"\ncolour = "red"'), "assignment week2: unknown key colour"),
])
def test_bad_assignments_name_the_file_the_assignment_and_the_key(tmp_path: Path, change, message):
    (tmp_path / "course.toml").write_text(COURSE.replace(*change))
    with pytest.raises(AssignmentError, match=message) as caught:
        assignments.load(tmp_path)
    assert str(tmp_path / "course.toml") in str(caught.value)
