"""What an audit shows: a table per drill in the terminal, ``audit.json`` for CI and
``audit.html`` for a person (every finding, a mutant's diff, a route's call)."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path

import jinja2
from rich.console import Console
from rich.table import Table

from grader.authoring.audit.run import DrillAudit, Finding
from grader.core import i18n
from grader.core.i18n import Message, _

TEMPLATE = Path(__file__).resolve().parent.parent / "templates" / "audit.html.j2"


def verdict_label(verdict: str) -> str:
    return {"full": _("full marks"), "killed": _("killed"), "survived": _("survived"), "zero": _("scores 0"),
            "scored": _("scores points"),
            "closed": _("closed"), "open": _("open: earns points"), "error": _("could not be graded")}.get(verdict, verdict)


def score_text(f: Finding) -> str:
    """``7.5 / 10``; ``? / 10`` where the grading stopped at the first failure."""
    return f"? / {f.max_score:g}" if f.stopped else f"{f.score:g} / {f.max_score:g}"


def kind_label(kind: str) -> str:
    return {"reference": _("reference"), "mutant": _("mutant"), "do-nothing": _("do-nothing answer"),
            "route": _("route")}.get(kind, kind)


def print_tables(audits: list[DrillAudit], console: Console) -> None:
    """One row per drill, then every unexplained finding of each."""
    table = Table(title=_("torchdrill audit"))
    table.add_column(_("drill"), no_wrap=True)
    for header in (_("mutants killed"), _("accepted"), _("do-nothing at 0"), _("routes closed"),
                   _("unexplained"), _("seconds")):
        table.add_column(header, justify="right")
    for a in audits:
        s = a.summary()
        table.add_row(a.drill, f"{s['killed']} / {s['mutants_graded']} ({a.mutants_total})", str(s["accepted"]),
                      f"{s['do_nothing_zero']} / {s['do_nothing']}", f"{s['routes_closed']} / {s['routes']}",
                      str(s["unexplained"]), f"{s['seconds']}")
    console.print(table)
    for a in audits:
        for f in a.unexplained:
            console.print(f"[bold]{a.drill}[/bold] {kind_label(f.kind)} [cyan]{f.id}[/cyan]: {description(f)} "
                          f"({verdict_label(f.verdict)}, {score_text(f)})", markup=True, highlight=False)
            if f.detail and f.kind != "mutant":
                console.print("    " + f.detail, markup=False, highlight=False)
            elif f.detail:
                console.print(f.detail.rstrip(), markup=False, highlight=False)
            if f.verdict == "error":
                console.print("    " + f.error[-400:], markup=False, highlight=False)
        for entry in a.stale:
            console.print(_("{drill}: the acceptance of {entry} matches nothing the audit found (remove it)",
                            drill=a.drill, entry=entry), markup=False, highlight=False)
        if a.routes_hunted and not a.routes_complete:
            console.print(_("{drill}: the route hunt stopped at its budget after {count} callables "
                            "(--route-budget for a whole hunt)", drill=a.drill, count=a.routes_tried),
                          markup=False, highlight=False)


def description(f: Finding) -> str:
    """What a finding changed or used, in the command's language where it is words."""
    message = Message.from_json(f.message) if f.message is not None else None
    return i18n.current().message(message) if message is not None else f.description


def as_json(audits: list[DrillAudit], seed: int) -> dict:
    return {"seed": seed, "unexplained": sum(len(a.unexplained) for a in audits),
            "failing": sum(a.failing for a in audits),
            "drills": [{**a.summary(), "stale": a.stale, "routes_hunted": a.routes_hunted,
                        "routes_not_hunted": a.routes_not_hunted, "routes_tried": a.routes_tried,
                        "routes_complete": a.routes_complete, "hunt_crashed": a.hunt_crashed,
                        "findings": [asdict(f) for f in a.findings]} for a in audits]}


def write(audits: list[DrillAudit], out: Path, seed: int, lang: i18n.Lang) -> tuple[Path, Path]:
    """``audit.json`` and ``audit.html`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    data = as_json(audits, seed)
    json_path, html_path = out / "audit.json", out / "audit.html"
    _write(json_path, json.dumps(data, indent=1, ensure_ascii=False))
    t = i18n.translator(lang)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATE.parent)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             extensions=["jinja2.ext.i18n"])
    env.install_gettext_callables(t.catalog.gettext, t.catalog.ngettext, newstyle=True)  # type: ignore[attr-defined]
    with i18n.speaking(lang):
        html = env.get_template(TEMPLATE.name).render(
            audits=audits, data=data, lang=lang.html, verdict_label=verdict_label, kind_label=kind_label,
            score_text=score_text, description=description)
    _write(html_path, html)
    return json_path, html_path


def _write(path: Path, text: str) -> None:
    """Whole or not at all: two audits writing one folder leave one's file, never a mix."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
