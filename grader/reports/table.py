"""The score table, printed with rich (colour only on a terminal).

On a terminal: colour and box-drawing characters. Anywhere else (CI logs, pipes,
files): plain ASCII, no escape codes. Text that can come from a submission
(messages, values) is printed as ``rich.text.Text``, never parsed as markup.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, TextIO

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from grader.core.outcomes import PASSED
from grader.core.results_json import Results
from grader.reports import counterexamples, present

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
                return escape(f"{t['name']} ({t['outcome'].replace('_', ' ')})")
        return ""
    others = len(present.reasons(exercise)) - 1
    more = f" + {present.plural(others, 'other reason')}" if others else ""
    return escape(f"{lost['name']} ({present.label(lost['outcome'])}){more}")


def make_console(file: TextIO | None = None, width: int | None = None) -> Console:
    """Colour and box drawing on a terminal; plain ASCII, 120 columns anywhere else."""
    file = file or sys.stdout
    tty = file.isatty()
    return Console(file=file, force_terminal=tty, no_color=not tty, emoji=False,
                   color_system="auto" if tty else None, width=width or (None if tty else 120))


def render(results: Results, file: TextIO | None = None, width: int | None = None,
           verbose: bool = False) -> None:
    """Print the score table; with ``verbose``, every failing property's counterexample."""
    console = make_console(file, width)
    tty = console.is_terminal
    table = Table(title=f"torchdrill: {escape(results['submission'])}", title_justify="left",
                  box=box.HEAVY_HEAD if tty else box.ASCII, safe_box=not tty)
    table.add_column("exercise")
    table.add_column("score", justify="right")
    table.add_column("status")
    table.add_column("heaviest failing property", overflow="fold")
    for ex in results["exercises"]:
        status = ex["status"]
        score = "pending" if status == "not_run" else present.score_text(ex["score"], ex["max_score"])
        table.add_row(escape(ex["id"]), score, f"[{STATUS_STYLE.get(status, '')}]{status.replace('_', ' ')}[/]"
                      f"{hints_note(ex)}{flags_note(ex) if verbose else ''}", first_problem(ex))
    total = present.score_text(results["score"], results["max_score"])
    table.add_section()
    table.add_row("total", total, "", _pending_note(results))
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
            body = present.printable(counterexamples.problem_text(t)) or "(no message or counterexample recorded)"
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
                console.print(Text(f"\n{ex['id']}: the same on {len(others)} more "
                                   f"{'property' if len(others) == 1 else 'properties'}: {', '.join(others)}",
                                   style="dim"), soft_wrap=True)


def render_reasons(exercise: Mapping[str, Any], console: Console) -> None:
    """When an exercise lost properties for several reasons, each reason once, heaviest
    first, with the properties that had it: a second mistake is not hidden behind the
    first."""
    found = present.reasons(exercise)
    if len(found) < 2:
        return
    console.print()
    console.print(Text(f"{exercise['id']}: {len(found)} different reasons, heaviest first:", style="bold"))
    for n, group in enumerate(found, 1):
        names = ", ".join(f"{t['name']} (weight {present.number(t.get('weight', 1))})" for t in group["tests"])
        console.print(Text(f"  {n}. {present.printable(group['reason'])}\n     lost: {names}"), soft_wrap=True)


def render_flags(results: Mapping[str, Any], console: Console) -> None:
    """What the static scan flagged, one line each: the source line is the student's
    own text, so it is printed as ``Text``, never as markup."""
    for ex in results["exercises"]:
        for flag in ex.get("static_flags") or []:
            line = Text(f"{ex['id']}: static scan: {flag.get('name')} at line {flag.get('line')}"
                        f"{' (imported dynamically)' if flag.get('indirect') else ''}: ")
            line.append(present.printable(str(flag.get("code", ""))), style="dim")
            console.print(line, soft_wrap=True)


def flags_note(exercise: Mapping[str, Any]) -> str:
    """`` [2 static flags]``: the static scan found forbidden APIs (no points lost)."""
    n = len(exercise.get("static_flags") or [])
    return escape(f" [{n} static flag{'' if n == 1 else 's'}]") if n else ""


def hints_note(exercise: Mapping[str, Any]) -> str:
    """`` (2 hints)`` when the learner revealed hints for this exercise."""
    used = exercise.get("hints_used") or 0
    return f" ({used} hint{'' if used == 1 else 's'})" if used else ""


def _pending_note(results: Results) -> str:
    pending = results.get("pending_points", 0)
    return f"{pending:g} points pending (not run here)" if pending else ""


def isolation_summary(results: Results) -> str:
    """``sandbox (every layer)`` / ``sandbox; missing: uid (off: unavailable: ...)``."""
    isolation = (results.get("environment") or {}).get("isolation") or {}
    mode = isolation.get("mode", "none")
    layers = isolation.get("layers") or {}
    missing = [f"{name} ({layers.get(name, '?')})" for name in isolation.get("missing") or []]
    if mode == "sandbox" and not missing:
        return "sandbox (every layer: " + ", ".join(layers) + ")"
    if mode == "none":
        return "none (the submission ran inside the grader)"
    return f"{mode}; missing: " + "; ".join(missing)
