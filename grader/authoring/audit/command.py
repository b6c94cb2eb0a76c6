"""``torchdrill audit [DRILL ...]``: how strong each drill's properties are.

Exits 0 when nothing is unexplained, 1 when a mutant survives, a do-nothing answer
scores, a route earns points or a candidate could not be graded, and the drill's
audit file does not accept it, or when an acceptance is stale (it names nothing a
complete audit found); 2 on bad usage.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

from rich.console import Console

from grader.authoring.audit import report
from grader.authoring.audit.run import Plan, audit
from grader.core import syllabus
from grader.core.errors import EXIT_OK, UsageError
from grader.core.i18n import _

EXIT_UNEXPLAINED = 1


def resolve_drills(course: Path, names: list[str]) -> list[str]:
    """The drills named (an id, or a name unique in the course), every drill when none."""
    known = list(syllabus.exercise_tests(course))
    if not names:
        return known
    chosen = []
    for name in names:
        matches = [d for d in known if d == name or d.rsplit("/", 1)[-1] == name]
        if len(matches) != 1:
            raise UsageError(_("unknown drill {name}; known: {known}", name=name, known=", ".join(known)))
        chosen.append(matches[0])
    return list(dict.fromkeys(chosen))


def cmd_audit(args: argparse.Namespace) -> int:
    course = Path(args.course).resolve() if args.course else syllabus.find_course(Path.cwd())
    drills = resolve_drills(course, args.drills)
    if args.mutants is not None and args.mutants < 0:
        raise UsageError(_("--mutants must be 0 or more, got {n}", n=args.mutants))
    if not 1 <= args.processes <= 32:
        raise UsageError(_("-j must be between 1 and 32, got {n}", n=args.processes))
    if not math.isfinite(args.route_budget) or args.route_budget <= 0:
        raise UsageError(_("--route-budget must be a positive number of seconds, got {n}", n=args.route_budget))
    plan = Plan(seed=args.seed, mutants=args.mutants, routes=not args.no_routes, processes=args.processes,
                route_budget_s=args.route_budget)
    console = Console(stderr=True)
    start = time.monotonic()
    with console.status(_("auditing {count} drills", count=len(drills))) as status:
        audits = audit(course, drills, plan, progress=lambda line: status.update(line))
    report.print_tables(audits, Console(width=max(Console().width, 110)))
    out = Path(args.out) if args.out else course / "reports" / "audit"
    json_path, html_path = report.write(audits, out, args.seed, args.lang)
    failing = sum(a.failing for a in audits)
    print(_("audit: {count} unexplained findings or stale acceptances in {seconds} s; {json}, {html}", count=failing,
            seconds=round(time.monotonic() - start, 1), json=json_path, html=html_path))
    return EXIT_UNEXPLAINED if failing else EXIT_OK
