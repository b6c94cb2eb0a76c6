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

TERM_COLUMNS = ("raw", "penalty", "override", "final")
TOTAL_RAW, TOTAL_PENALTY, TOTAL_OVERRIDE = "Raw Points", "Late Penalty", "Override Points"


def term_of(results: Results) -> dict[str, Any] | None:
    return results.get("term")


def group_label(group: Mapping[str, Any]) -> str:
    return group["name"] or "other drills"


def csv_header(terms: Sequence[Mapping[str, Any]]) -> list[str]:
    """``week1 raw, week1 penalty, week1 override, week1 final`` per assignment (in
    the first term's order), then the totals' raw, penalty and override columns."""
    names: list[str] = []
    for term in terms:
        for group in term["assignments"]:
            if group_label(group) not in names:
                names.append(group_label(group))
    return [*(f"{n} {c}" for n in names for c in TERM_COLUMNS), TOTAL_RAW, TOTAL_PENALTY, TOTAL_OVERRIDE]


def csv_cells(term: Mapping[str, Any] | None, header: list[str]) -> dict[str, float]:
    """Column -> points of one student's term grade (absent columns stay empty)."""
    if term is None:
        return {}
    cells = {f"{group_label(g)} {c}": float(g[c]) for g in term["assignments"] for c in TERM_COLUMNS}
    cells.update({TOTAL_RAW: term["raw"], TOTAL_PENALTY: term["penalty"], TOTAL_OVERRIDE: term["override"]})
    return {k: v for k, v in cells.items() if k in header}


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
                               submitted=group.get("submitted_at") or t.gettext("unknown"), late=late))
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


def history_lines(term: Mapping[str, Any]) -> list[str]:
    return [f"{h['at']}: {_n(h['final'])} points ({h['why']})" for h in term.get("history", [])]


def _n(x: float) -> str:
    return f"{round(x, 2):g}"
