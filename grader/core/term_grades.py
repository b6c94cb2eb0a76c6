"""A student's grade for the term: the graded points, what lateness costs, what the
instructor overrode, and the final points, per assignment and in total.

``grade`` is a pure function of plain data (the results document, the course's
assignments, the student's submission times, extensions and overrides), so the
gradebook can recompute it whenever an extension or an override changes, without
grading anything again. Its answer is a JSON-ready dict that travels inside the
results document as ``results["term"]``, which every report and export reads.

How the points add up, per assignment:

- ``raw``: the graded points of its drills;
- a drill override replaces that drill's graded points (it corrects the grading,
  so the late penalty still applies to it);
- ``penalty``: the late share (``grader.core.late_policy``) of those points;
- an assignment override sets the assignment's final points (the instructor's
  last word: the penalty is shown, not applied);
- ``override``: what overrides added or took away, so that always
  ``final = raw - penalty + override``.

Drills in no assignment count with their graded points (or their override), never
late. Totals are the sums.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

from grader.core.assignments import Assignment
from grader.core.late_policy import penalty
from grader.core.outcomes import NOT_RUN
from grader.core.results_json import Results

UNASSIGNED = ""  # the group of drills that belong to no assignment

# How far a submission time is trusted (``grader.intake.times`` says which source is which):
TRUSTED = "trusted"  # the instructor's or the platform's word: --times FILE, ID.timestamp.txt, Gradescope
STUDENTS_WORD = "student"  # the student's own: a timestamp.txt inside the submission, asked for by name
TRUST_LEVELS = (TRUSTED, STUDENTS_WORD)


class SubmissionTime(NamedTuple):
    """When a submission was handed in, where that was read, and how far it is trusted."""
    at: str  # ISO, aware
    source: str  # precisely where: ``alice.timestamp.txt``, ``alice/timestamp.txt``, ``times.csv, line 3``
    trust: str = TRUSTED  # one of TRUST_LEVELS


@dataclass(frozen=True)
class Extension:
    """A student's own due date for one assignment: ``until``, or ``days`` after the
    assignment's due date (kept as days, so it follows a due date that moves)."""
    until: str | None = None      # ISO, aware
    days: float | None = None
    reason: str = ""
    by: str = ""
    at: str = ""

    def due(self, assignment: Assignment) -> datetime:
        if self.days is not None:
            return assignment.due + timedelta(days=self.days)
        assert self.until is not None  # an extension has one of the two
        return datetime.fromisoformat(self.until)

    def describe(self, assignment: Assignment) -> str:
        when = self.due(assignment).astimezone(assignment.zone).isoformat(timespec="minutes")
        return f"{self.days:g} day(s), until {when}" if self.days is not None else f"until {when}"


@dataclass(frozen=True)
class Override:
    """Points an instructor set for a drill or an assignment, with who, when and why."""
    points: float
    reason: str
    by: str
    at: str


def grade(results: Results, assignments: tuple[Assignment, ...], *,
          times: Mapping[str, SubmissionTime | tuple[str, str]] | None = None,
          extensions: Mapping[str, Extension] | None = None,
          overrides: Mapping[str, Override] | None = None,
          course: Path | None = None) -> dict[str, Any]:
    """The term grade of one student (see the module's docstring).

    ``times``: assignment name -> SubmissionTime (submitted at, ISO and aware; where
    the time came from; its trust, TRUSTED when only the first two are given); an
    assignment without a time is never late. ``extensions``: assignment
    name -> Extension. ``overrides``: drill id or assignment name -> Override.
    ``course``: the folder a custom late policy is loaded from."""
    times, extensions, overrides = times or {}, extensions or {}, overrides or {}
    scores = {ex["id"]: (None if ex["status"] == NOT_RUN else float(ex["score"]))
              for ex in results["exercises"]}
    placed = {d for a in assignments for d in a.drills}
    groups = [_assignment(a, scores, _time(times.get(a.name)), extensions.get(a.name), overrides, course)
              for a in assignments]
    rest = [d for d in scores if d not in placed]
    if rest:
        groups.append(_group(UNASSIGNED, "drills in no assignment", rest, scores, overrides))
    used = {a.name for a in assignments} | set(scores)
    term: dict[str, Any] = {
        "assignments": groups,
        "raw": _sum(g["raw"] for g in groups),
        "penalty": _sum(g["penalty"] for g in groups),
        "override": _sum(g["override"] for g in groups),
        "final": _sum(g["final"] for g in groups),
        "unused_overrides": sorted(t for t in overrides if t not in used),
    }
    return term


def _time(time: SubmissionTime | tuple[str, str] | None) -> SubmissionTime | None:
    return None if time is None else SubmissionTime(*time)


def _assignment(a: Assignment, scores: Mapping[str, float | None], time: SubmissionTime | None,
                extension: Extension | None, overrides: Mapping[str, Override],
                course: Path | None) -> dict[str, Any]:
    group = _group(a.name, a.title, list(a.drills), scores, overrides)
    group["due"] = a.due.isoformat()
    group["policy"] = a.policy.describe()
    group["late_window"] = None if a.late_window is None else a.late_window.total_seconds()
    group["extension"] = None if extension is None else {
        "due": extension.due(a).isoformat(), "text": extension.describe(a), "reason": extension.reason,
        "by": extension.by, "at": extension.at}
    group["submitted_at"], group["time_source"], group["time_trust"] = time or (None, None, None)
    if time is None:
        group["late"] = {"late_by_s": 0.0, "share": 0.0, "why": "no submission time: never late"}
        return group
    late = penalty(datetime.fromisoformat(time.at), a.due, None if extension is None else extension.due(a),
                   a.policy, zone=a.zone, late_window=a.late_window, course=course)
    group["late"] = {"late_by_s": late.late_by.total_seconds(), "share": late.share, "why": late.why}
    lost = _round(group["before_penalty"] * late.share)
    group["penalty"] = lost
    if a.name not in overrides:
        group["final"] = _round(group["before_penalty"] - lost)
    group["override"] = _round(group["final"] - group["raw"] + lost)
    return group


def _group(name: str, title: str, drills: list[str], scores: Mapping[str, float | None],
           overrides: Mapping[str, Override]) -> dict[str, Any]:
    """A group's points before lateness: graded, then with drill overrides."""
    raw = _sum(scores.get(d) or 0.0 for d in drills)
    changed = []
    before = raw
    for drill in drills:
        if drill in overrides:
            o = overrides[drill]
            changed.append({"target": drill, "points": o.points, "was": scores.get(drill), "reason": o.reason,
                            "by": o.by, "at": o.at})
            before += o.points - (scores.get(drill) or 0.0)
    group: dict[str, Any] = {"name": name, "title": title, "drills": drills, "raw": raw,
                             "before_penalty": _round(before), "penalty": 0.0, "overrides": changed,
                             "late": None}
    if name and name in overrides:
        o = overrides[name]
        group["overrides"].append({"target": name, "points": o.points, "was": None, "reason": o.reason,
                                   "by": o.by, "at": o.at})
        group["final"] = _round(o.points)
    else:
        group["final"] = _round(before)
    group["override"] = _round(group["final"] - raw)  # penalty 0 here; _assignment corrects it
    return group


def _sum(values: Any) -> float:
    return _round(sum(values))


def _round(x: float) -> float:
    return round(x, 6) + 0.0  # a hair under 0 rounds to -0.0: adding 0.0 after makes it 0.0
