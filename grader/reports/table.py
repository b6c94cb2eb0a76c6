"""The score table, printed with rich (colour only on a terminal).

On a terminal: colour and box-drawing characters. Anywhere else (CI logs, pipes,
files): plain ASCII, no escape codes. Text that can come from a submission
(messages, values) is printed as ``rich.text.Text``, never parsed as markup.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from grader.core import drill_texts, i18n
from grader.core.i18n import N_, _, ngettext
from grader.core.outcomes import PASSED
from grader.core.results_json import Results
from grader.reports import counterexamples, present

# An exercise's status in the table's words (``partial``, ``not run``: shorter than a report's).
STATUS_WORDS = {"passed": N_("passed"), "partial": N_("partial"), "failed": N_("failed"), "error": N_("error"),
                "not_attempted": N_("not attempted"), "not_run": N_("not run")}

STATUS_STYLE = {"passed": "green", "partial": "yellow", "failed": "red", "error": "red",
                "not_attempted": "dim", "not_run": "cyan"}


def first_problem(exercise: Mapping[str, Any]) -> str:
    """The summary of what went wrong: the heaviest lost property (not the first in the
    file), and how many other reasons the exercise lost properties for; else the first
    property not attempted."""
    lost = present.main_problem(exercise)
    if lost is None:
        for t in exercise["tests"]:
            if t["outcome"] not in (PASSED, "not_run"):
                return escape(f"{t['name']} ({present.label(t['outcome'])})")
        return ""
    others = len(present.reasons(exercise)) - 1
    more = ngettext(" + {n} other reason", " + {n} other reasons", others) if others else ""
    return escape(f"{lost['name']} ({present.label(lost['outcome'])}){more}")


def make_console(file: TextIO | None = None, width: int | None = None) -> Console:
    """Colour and box drawing on a terminal; plain ASCII, 120 columns anywhere else."""
    file = file or sys.stdout
    tty = file.isatty()
    return Console(file=file, force_terminal=tty, no_color=not tty, emoji=False,
                   color_system="auto" if tty else None, width=width or (None if tty else 120))


def render(results: Results, file: TextIO | None = None, width: int | None = None,
           verbose: bool = False, course: Path | None = None) -> None:
    """Print the score table; with ``verbose``, every failing property's counterexample
    (the course's own phrases in the command's language, given ``course``)."""
    if course is not None:
        results = drill_texts.with_titles(results, course, i18n.current().lang)
    console = make_console(file, width)
    tty = console.is_terminal
    table = Table(title=f"torchdrill: {escape(results['submission'])}", title_justify="left",
                  box=box.HEAVY_HEAD if tty else box.ASCII, safe_box=not tty)
    table.add_column(_("exercise"))
    table.add_column(_("score"), justify="right")
    table.add_column(_("status"))
    table.add_column(_("heaviest failing property"), overflow="fold")
    for ex in results["exercises"]:
        status = ex["status"]
        score = _("pending") if status == "not_run" else present.score_text(ex["score"], ex["max_score"])
        word = _(STATUS_WORDS[status]) if status in STATUS_WORDS else status.replace("_", " ")
        table.add_row(escape(ex["id"]), score, f"[{STATUS_STYLE.get(status, '')}]{escape(word)}[/]"
                      f"{hints_note(ex)}{flags_note(ex) if verbose else ''}", first_problem(ex))
    total = present.score_text(results["score"], results["max_score"])
    table.add_section()
    table.add_row(_("total"), total, "", _pending_note(results))
    console.print(table)
    if verbose:
        render_flags(results, console)
        render_problems(results, console)


def render_problems(results: Mapping[str, Any], console: Console) -> None:
    """Each failing property, heaviest first: its message, counterexample and the
    student's traceback, after the list of distinct reasons when there are several
    (``render_reasons``). Properties of a drill that failed with the very same text (a
    file that does not load) are shown once, with the names of the others."""
    for ex in results["exercises"]:
        render_reasons(ex, console)
        shown: dict[str, list[str]] = {}  # text -> the other properties that had it
        for t in present.sorted_tests(ex["tests"]):
            if t["outcome"] not in present.PROBLEMS:
                continue
            body = (present.printable(counterexamples.problem_text(t))
                    or _("(no message or counterexample recorded)"))
            if body in shown:
                shown[body].append(t["name"])
                continue
            shown[body] = []
            console.print()
            heading = Text(f"{ex['id']}::{t['name']}", style="bold")
            heading.append(f"  {present.label(t['outcome'])}", style=STATUS_STYLE.get(t["outcome"], "red"))
            console.print(heading)
            console.print(Text("    " + body.replace("\n", "\n    ")), soft_wrap=True)
        for others in shown.values():
            if others:
                console.print(Text("\n" + ngettext("{drill}: the same on {n} more property: {names}",
                                                    "{drill}: the same on {n} more properties: {names}",
                                                    len(others), drill=ex["id"], names=", ".join(others)),
                                   style="dim"), soft_wrap=True)


def render_reasons(exercise: Mapping[str, Any], console: Console) -> None:
    """Each reason an exercise lost properties for, heaviest first, with the properties
    that had it (``present.reasons``: the same difference is one reason): a second
    mistake is not hidden behind the first, and one mistake is not counted as many.
    Nothing when that would say nothing new (``present.reasons_worth_listing``)."""
    found = present.reasons(exercise)
    if not present.reasons_worth_listing(found):
        return
    console.print()
    heading = (_("{drill}: lost for {n} reasons, heaviest first (properties that failed with the same "
                 "difference are one reason):", drill=exercise["id"], n=len(found)) if len(found) > 1 else
               _("{drill}: lost for one reason, the same difference in {n} properties:",
                 drill=exercise["id"], n=len(found[0]["tests"])))
    console.print(Text(heading, style="bold"))
    for n, group in enumerate(found, 1):
        names = ", ".join(_("{name} (weight {weight})", name=t["name"], weight=present.number(t.get("weight", 1)))
                          for t in group["tests"])
        console.print(Text(_("  {n}. {reason}\n     lost: {names}", n=n, reason=present.printable(group["reason"]),
                             names=names)), soft_wrap=True)


def render_flags(results: Mapping[str, Any], console: Console) -> None:
    """What the static scan flagged, one line each: the source line is the student's
    own text, so it is printed as ``Text``, never as markup."""
    for ex in results["exercises"]:
        for flag in ex.get("static_flags") or []:
            where = {"drill": ex["id"], "name": flag.get("name"), "line": flag.get("line")}
            line = Text(_("{drill}: static scan: {name} at line {line} (imported dynamically): ", **where)
                        if flag.get("indirect") else _("{drill}: static scan: {name} at line {line}: ", **where))
            line.append(present.printable(str(flag.get("code", ""))), style="dim")
            console.print(line, soft_wrap=True)


def flags_note(exercise: Mapping[str, Any]) -> str:
    """`` [2 static flags]``: the static scan found forbidden APIs (no points lost)."""
    n = len(exercise.get("static_flags") or [])
    return escape(ngettext(" [{n} static flag]", " [{n} static flags]", n)) if n else ""


def hints_note(exercise: Mapping[str, Any]) -> str:
    """`` (2 hints)`` when the learner revealed hints for this exercise."""
    used = exercise.get("hints_used") or 0
    return ngettext(" ({n} hint)", " ({n} hints)", used) if used else ""


def _pending_note(results: Results) -> str:
    pending = results.get("pending_points", 0)
    return _("{points} points pending (not run here)", points=f"{pending:g}") if pending else ""


def isolation_summary(results: Results) -> str:
    """``sandbox (every layer)`` / ``sandbox; missing: uid (off: unavailable: ...)``."""
    isolation = (results.get("environment") or {}).get("isolation") or {}
    mode = isolation.get("mode", "none")
    layers = isolation.get("layers") or {}
    missing = [f"{name} ({layers.get(name, '?')})" for name in isolation.get("missing") or []]
    if mode == "sandbox" and not missing:
        return _("sandbox (every layer: {layers})", layers=", ".join(layers))
    if mode == "none":
        return _("none (the submission ran inside the grader)")
    return _("{mode}; missing: {layers}", mode=mode, layers="; ".join(missing))
