"""How a term grade (``results["term"]``, ``grader.core.term_grades``) reads: the
columns ``grades.csv`` gains, the lines the Gradescope output and the reports show.

Every view reads the same numbers, so a student's report, ``class.html``,
``grades.csv`` and Gradescope agree to the cent: ``final = raw - penalty +
override`` per assignment and in total.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from grader.core import i18n
from grader.core.results_json import Results
from grader.core.term_grades import STUDENTS_WORD
from grader.reports import present

TERM_COLUMNS = ("raw", "penalty", "override", "final")
# An assignment's submission time and where it came from, with its trust
# (``grader.core.term_grades``): ``alice/timestamp.txt (the student's word)``.
TIME_COLUMNS = ("submitted", "time source")
TOTAL_RAW, TOTAL_PENALTY, TOTAL_OVERRIDE = "Raw Points", "Late Penalty", "Override Points"


def term_of(results: Results) -> dict[str, Any] | None:
    return results.get("term")


def group_label(group: Mapping[str, Any]) -> str:
    return group["name"] or "other drills"


def csv_header(terms: Sequence[Mapping[str, Any]]) -> list[str]:
    """``week1 raw, week1 penalty, week1 override, week1 final, week1 submitted, week1
    time source`` per assignment (in the first term's order; the drills in no
    assignment have no time), then the totals' raw, penalty and override columns."""
    names: list[str] = []
    for term in terms:
        for group in term["assignments"]:
            if group_label(group) not in names:
                names.append(group_label(group))
    timed = {group_label(g) for term in terms for g in term["assignments"] if g["name"]}
    return [*(f"{n} {c}" for n in names for c in TERM_COLUMNS + (TIME_COLUMNS if n in timed else ())),
            TOTAL_RAW, TOTAL_PENALTY, TOTAL_OVERRIDE]


def csv_cells(term: Mapping[str, Any] | None, header: list[str]) -> dict[str, float | str]:
    """Column -> points (or, for a submission time and its source, text) of one
    student's term grade (absent columns stay empty)."""
    if term is None:
        return {}
    cells: dict[str, float | str] = {
        f"{group_label(g)} {c}": float(g[c]) for g in term["assignments"] for c in TERM_COLUMNS}
    for g in term["assignments"]:
        if g.get("submitted_at"):
            cells[f"{group_label(g)} {TIME_COLUMNS[0]}"] = g["submitted_at"]
            cells[f"{group_label(g)} {TIME_COLUMNS[1]}"] = time_source(g)
    cells.update({TOTAL_RAW: term["raw"], TOTAL_PENALTY: term["penalty"], TOTAL_OVERRIDE: term["override"]})
    return {k: v for k, v in cells.items() if k in header}


def time_source(group: Mapping[str, Any], t: i18n.Translator | None = None) -> str:
    """Where an assignment's submission time came from, and its trust:
    ``alice.timestamp.txt (trusted)``, ``alice/timestamp.txt (the student's word)``."""
    t = t or i18n.translator(i18n.Lang.EN)
    if group.get("time_trust") == STUDENTS_WORD:
        return t.gettext("{source} (the student's word)", source=group.get("time_source"))
    return t.gettext("{source} (trusted)", source=group.get("time_source"))


def _submitted(group: Mapping[str, Any], t: i18n.Translator) -> str:
    """``2026-09-16T10:00:00-04:00, alice.timestamp.txt (trusted)``, or "unknown"."""
    if not group.get("submitted_at"):
        return t.gettext("unknown")
    return f"{group['submitted_at']}, {time_source(group, t)}" if group.get("time_source") else group["submitted_at"]


def summary_lines(term: Mapping[str, Any], t: i18n.Translator | None = None) -> list[str]:
    """The term grade in plain text (Gradescope's output, the reports' titles), in ``t``'s
    language (English by default)."""
    t = t or i18n.translator(i18n.Lang.EN)
    lines = [t.gettext("final {final} points = {raw} graded - {penalty} late penalty + {override} override",
                       final=_n(term["final"]), raw=_n(term["raw"]), penalty=_n(term["penalty"]),
                       override=_n(term["override"]))]
    for group in term["assignments"]:
        if not group["name"]:
            continue
        due = (group.get("extension") or {}).get("due") or group.get("due")
        late = (group.get("late") or {}).get("why", "")
        lines.append(t.gettext("{name}: {final} points (graded {raw}, penalty {penalty}, override {override}); "
                               "due {due}; submitted {submitted}: {late}", name=group["name"],
                               final=_n(group["final"]), raw=_n(group["raw"]), penalty=_n(group["penalty"]),
                               override=_n(group["override"]), due=due,
                               submitted=_submitted(group, t), late=late))
        for o in group["overrides"]:
            lines.append(t.gettext("  override of {target}: {points} points ({reason}; by {by}, {at})",
                                   target=o["target"], points=_n(o["points"]), reason=o["reason"],
                                   by=o["by"], at=o["at"]))
    for group in term["assignments"]:
        if not group["name"]:
            for o in group["overrides"]:
                lines.append(t.gettext("override of {target}: {points} points ({reason}; by {by})",
                                       target=o["target"], points=_n(o["points"]), reason=o["reason"],
                                       by=o["by"]))
    return lines


def _n(x: float) -> str:
    """Points as people read them: 2 decimals at most, and a difference of nothing (-0.0,
    a float residue) is 0, never -0."""
    return present.number(x)
