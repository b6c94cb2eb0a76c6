"""``torchdrill list``: every drill in course order with its last status, points and
hints used, then the learner's progress and what to check next.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from rich import box
from rich.console import Console, JustifyMethod
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from grader.core import drill_texts, hints, i18n, syllabus
from grader.core.errors import EXIT_OK
from grader.core.i18n import N_, _
from grader.core.outcomes import NOT_ATTEMPTED, NOT_RUN, PASSED
from grader.core.results_json import Results
from grader.core.syllabus import Course, Drill
from grader.learner.check import QUICK_PROFILE
from grader.learner.place import last_results, next_unfinished, place, short_name
from grader.reports import present, table

# An exercise's status, in the words of a learner's to-do list.
LIST_STATUS = {PASSED: N_("done"), "partial": N_("partial"), "failed": N_("failing"), "error": N_("error"),
               NOT_ATTEMPTED: N_("not attempted"), NOT_RUN: N_("not run here")}
NOT_CHECKED = N_("not checked")


def render_list(course: Course, results: Results | None, used: dict[str, int],
                console: Console) -> None:
    """Every drill in course order with its last status and points, then progress."""
    rows = {ex["id"]: ex for ex in (results.get("exercises", []) if results else [])
            if isinstance(ex.get("status"), str) and isinstance(ex.get("score"), (int, float))
            and isinstance(ex.get("max_score"), (int, float))}  # a hand-edited row without them: unchecked
    tty = console.is_terminal
    lang = i18n.current().lang
    out = Table(title=escape(drill_texts.course_title(course, lang)), title_justify="left",
                box=box.SIMPLE_HEAD if tty else box.ASCII, safe_box=not tty)
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("#", "right"), (_("drill"), "left"), (_("status"), "left"),
        (_("points"), "right"), (_("hints"), "right"))
    for name, justify in columns:
        out.add_column(name, justify=justify)
    number = 0
    for topic in course.topics:
        out.add_row("", f"[bold]{escape(drill_texts.topic_title(course, lang, topic.name))}[/]", "", "", "")
        for drill in topic.drills:
            number += 1
            out.add_row(str(number), *_list_cells(course, drill, rows.get(drill.id), used))
        if topic is not course.topics[-1]:
            out.add_section()
    console.print(out)
    for line in progress_lines(course, rows):
        console.print(Text(line))


def _list_cells(course: Course, drill: Drill, row: Mapping[str, Any] | None, used: dict[str, int]) -> list[str]:
    points = syllabus.drill_facts(course.root, drill.id)["points"]
    if row is None:
        status, score = _(NOT_CHECKED), f"- / {present.number(points)}"
    else:
        status = _(LIST_STATUS[row["status"]]) if row["status"] in LIST_STATUS else row["status"]
        score = _("pending") if row["status"] == NOT_RUN else present.score_text(row["score"], row["max_score"])
        if row.get("profile") == QUICK_PROFILE:
            status += " *"
    style = table.STATUS_STYLE.get(row["status"], "") if row else "dim"
    hint_text = f"{used.get(drill.id, 0)} / {len(drill.hints)}" if drill.hints else "-"
    return [escape(drill.id), f"[{style}]{status}[/]" if style else status, score, hint_text]


def progress_lines(course: Course, rows: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Overall progress in words, and what to do next."""
    total = sum(syllabus.drill_facts(course.root, i)["points"] or 0 for i in course.ids)
    score = sum(rows[i]["score"] for i in course.ids if i in rows)
    done = sum(1 for i in course.ids if i in rows and rows[i]["status"] == PASSED)
    lines = [_("progress: {done} of {count} drills done, {score} / {total} points ({percent}%)",
               done=done, count=len(course.ids), score=present.number(score),
               total=present.number(total), percent=f"{present.percent(score, total):.0f}")]
    if any(r.get("profile") == QUICK_PROFILE for r in rows.values()):
        lines.append(_("* from `torchdrill check` (quick: at most 25 examples per property); "
                       "`torchdrill grade` tries 100"))
    following = next_unfinished(course, {i: r["status"] for i, r in rows.items()})
    lines.append(_("next: torchdrill check {name}", name=short_name(course, following)) if following
                 else _("every drill is done"))
    return lines


def cmd_list(args: argparse.Namespace) -> int:
    where = place(args)
    results = last_results(where.results_path)
    console = table.make_console()
    render_list(where.course, results, hints.revealed(where.submission), console)
    if results is None:
        console.print(Text(_("(no results yet at {path}: statuses appear after "
                             "`torchdrill check NAME` or `torchdrill grade`)",
                             path=where.shown_path(where.results_path)), style="dim"))
    return EXIT_OK
