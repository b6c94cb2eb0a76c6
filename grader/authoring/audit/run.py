"""One audit of some drills: build the candidates, hunt the routes, grade everything,
and sort what was found into killed, accepted and unexplained.

- a **mutant** is killed when it loses points; one that keeps every point survives;
- a **do-nothing answer** must score 0;
- a **route** is closed when, graded as the function's answer (the drill's other
  functions left as stubs), it earns nothing: in-process first, and in the sandbox
  (whose armor refuses more) where it earned points in-process.

A survivor, a scoring do-nothing answer or an open route is unexplained unless the
drill's audit file accepts it (``grader.authoring.audit.accepted``). A seed picks the
sample of mutants and the do-nothing mixes, so there is no fixed corpus to tune to.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader.authoring.audit import accepted, do_nothing, mutants
from grader.authoring.audit.grading import Candidate, Graded, grade_all
from grader.authoring.audit.routes import Route
from grader.core.errors import UsageError
from grader.core.i18n import Message, _

ROUTE_BUDGET_S = 60.0  # seconds of calls per drill's hunt
ROUTES_GRADED = 40     # at most this many routes per drill are graded; more is an unexplained finding


@dataclass
class Finding:
    """One candidate and its verdict."""

    kind: str            # reference (the control), mutant, do-nothing, route
    id: str
    description: str     # in English: what an acceptance names
    detail: str = ""     # a mutant's diff, a route's call
    score: float = 0.0
    max_score: float = 0.0
    failed: list[str] = field(default_factory=list)
    stopped: bool = False  # graded up to its first failure only: the score is not known
    verdict: str = ""    # full (the reference), killed, survived, zero, scored, closed, open, error
    error: str = ""      # why it could not be graded
    accepted: str = ""   # the reason the drill's audit file gives for accepting it
    seconds: float = 0.0
    message: dict | None = None  # the description as a kept message (grader.core.i18n.Message), for another language

    @property
    def unexplained(self) -> bool:
        return self.verdict in ("survived", "scored", "open", "error") and not self.accepted


@dataclass
class DrillAudit:
    drill: str
    mutants_total: int = 0
    findings: list[Finding] = field(default_factory=list)
    routes_hunted: list[str] = field(default_factory=list)
    routes_not_hunted: list[str] = field(default_factory=list)
    routes_tried: int = 0
    routes_complete: bool = False
    hunt_crashed: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)   # acceptances that matched nothing found
    seconds: float = 0.0

    def of(self, kind: str) -> list[Finding]:
        return [f for f in self.findings if f.kind == kind]

    @property
    def unexplained(self) -> list[Finding]:
        return [f for f in self.findings if f.unexplained]

    @property
    def failing(self) -> int:
        """What makes the audit fail: unexplained findings and stale acceptances."""
        return len(self.unexplained) + len(self.stale)

    def summary(self) -> dict[str, object]:
        m, d, r = self.of("mutant"), self.of("do-nothing"), self.of("route")
        return {"drill": self.drill, "mutants": self.mutants_total, "mutants_graded": len(m),
                "killed": sum(f.verdict == "killed" for f in m),
                "accepted": sum(bool(f.accepted) for f in self.findings),
                "do_nothing": len(d), "do_nothing_zero": sum(f.verdict == "zero" for f in d),
                "routes": len(r), "routes_closed": sum(f.verdict == "closed" for f in r),
                "unexplained": len(self.unexplained), "stale": len(self.stale), "seconds": round(self.seconds, 1),
                "routes_tried": self.routes_tried, "routes_complete": self.routes_complete}


@dataclass(frozen=True)
class Plan:
    seed: int = 0
    mutants: int | None = None      # per drill; None: every one
    routes: bool = True
    processes: int = 2
    route_budget_s: float = ROUTE_BUDGET_S


def audit(course: Path, drills: list[str], plan: Plan,
          progress: Callable[[str], None] | None = None) -> list[DrillAudit]:
    """Audit each drill of ``drills``; the findings per drill."""
    audits = {d: DrillAudit(d) for d in drills}
    candidates: list[Candidate] = []
    findings: dict[str, tuple[DrillAudit, Finding]] = {}

    def add(a: DrillAudit, finding: Finding, source: str, isolation: str = "none") -> None:
        key = f"{a.drill} {finding.kind} {finding.id}"
        candidates.append(Candidate(key, a.drill, source, isolation, first_failure=finding.kind == "mutant"))
        findings[key] = (a, finding)

    for drill, a in audits.items():
        reference, stub_path = course / "reference" / f"{drill}.py", course / "exercises" / f"{drill}.py"
        ref_source, stub = _read(reference), _read(stub_path)
        if not do_nothing.public_functions(stub):
            raise UsageError(_("{path}: the stub has no public function to audit", path=stub_path))
        # the control: the reference under the audit's own settings must keep every point
        add(a, Finding("reference", "reference", "the reference itself"), ref_source)
        try:
            every = mutants.mutants(ref_source, str(reference))
        except SyntaxError as exc:
            raise UsageError(_("{path}, line {line}: SyntaxError: {error}", path=reference, line=exc.lineno,
                               error=exc.msg)) from None
        a.mutants_total = len(every)
        chosen = every if plan.mutants is None or plan.mutants >= len(every) else \
            sorted(random.Random(f"{plan.seed}:{drill}").sample(every, plan.mutants), key=lambda m: m.line)
        for m in chosen:
            add(a, Finding("mutant", m.id, m.description, m.diff,
                           message=m.message.to_json() if m.message is not None else None), m.source)
        for answer in do_nothing.answers(stub, ref_source, reference, plan.seed):
            add(a, Finding("do-nothing", answer.id, ", ".join(f"{f}: {k}" for f, k in answer.kinds.items())),
                answer.source)
    if plan.routes:
        for a, routes in _hunt_all(course, list(audits.values()), plan, progress):
            stub = _read(course / "exercises" / f"{a.drill}.py")
            for route in routes[:ROUTES_GRADED]:
                answered = Message("{function} answered by {path}", {"function": route.function, "path": route.path})
                add(a, Finding("route", route.id, str(answered), _call_text(route), message=answered.to_json()),
                    route_source(stub, route))
            if len(routes) > ROUTES_GRADED:
                a.findings.append(Finding("route", "more", str(Message("{count} more routes, not graded",
                                                                       {"count": len(routes) - ROUTES_GRADED})),
                                          verdict="error", error=", ".join(r.id for r in routes[ROUTES_GRADED:])))

    done, total = 0, len(candidates)

    def graded(g: Graded) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(f"[{done}/{total}] {g.key}")

    results = grade_all(course, candidates, plan.processes, graded)
    # A route that earned nothing in-process (the drill's guard refused it, or it is
    # wrong) earns nothing in the sandbox either; one that earned points there is
    # graded again in the sandbox, whose armor refuses more: its verdict stands.
    again = [replace(c, isolation="sandbox") for c in candidates
             if findings[c.key][1].kind == "route" and results[c.key].error is None and results[c.key].score > 0]
    total += len(again)
    results.update(grade_all(course, again, plan.processes, graded))
    for key, (a, finding) in findings.items():
        _judge(finding, results[key])
        a.findings.append(finding)
        a.seconds += finding.seconds
    for a in audits.values():
        _apply_acceptances(course, a)
    return list(audits.values())


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(_("{path}: cannot be read: {error}", path=path, error=exc)) from None


def _judge(finding: Finding, g: Graded) -> None:
    finding.score, finding.max_score, finding.failed, finding.seconds = g.score, g.max_score, g.failed, g.seconds
    finding.stopped = g.stopped
    if g.error is not None:
        finding.verdict, finding.error = "error", g.error
    elif finding.kind == "reference":
        finding.verdict = "full" if g.score == g.max_score else "error"
        if finding.verdict == "error":
            finding.error = (f"the reference lost points ({g.score:g} / {g.max_score:g}: {', '.join(g.failed)}) under "
                             "the audit's settings (a call time limit on a busy machine?): this drill's verdicts are void")
    elif finding.kind == "mutant":
        finding.verdict = "killed" if g.stopped or g.score < g.max_score else "survived"
    elif finding.kind == "do-nothing":
        finding.verdict = "zero" if g.score == 0 else "scored"
    else:
        finding.verdict = "closed" if g.score == 0 else "open"


def _apply_acceptances(course: Path, a: DrillAudit) -> None:
    """Accept what the drill's audit file names: a surviving mutant with the same id
    and change, an open route with the same id. An acceptance that matches nothing
    (or a killed mutant, a closed route) is stale, where the audit met all it could
    name: every mutant graded, the routes hunted to the end."""
    accepts = accepted.read(course, a.drill)
    used: set[tuple[str, str]] = set()
    for f in a.findings:
        acceptance = accepts.get((f.kind, f.id))
        if acceptance is None or f.verdict not in ("survived", "open"):
            continue
        if f.kind == "mutant" and acceptance.change != f.description:
            continue  # the id now names another change: the acceptance no longer applies
        used.add((f.kind, f.id))
        f.accepted = acceptance.reason
    every_mutant = len(a.of("mutant")) == a.mutants_total
    a.stale = [f"{kind} {id_}" for (kind, id_) in accepts if (kind, id_) not in used
               and (kind != "mutant" or every_mutant) and (kind != "route" or a.routes_complete)]


# ------------------------------------------------------------------ routes

def _hunt_all(course: Path, audits: list[DrillAudit], plan: Plan,
              progress: Callable[[str], None] | None) -> list[tuple[DrillAudit, list[Route]]]:
    """Hunt every drill's routes: the drills dealt over ``plan.processes`` hunting
    processes, each of which records its drills' examples in one grading and tries
    every candidate once."""
    def one(group: list[DrillAudit]) -> list[tuple[DrillAudit, list[Route]]]:
        start = time.monotonic()
        budget = plan.route_budget_s * len(group)
        with tempfile.TemporaryDirectory(prefix="torchdrill-hunt-") as tmp:
            out = Path(tmp) / "routes.json"
            try:
                proc = subprocess.run([sys.executable, "-m", "grader.authoring.audit.routes", str(course), str(out),
                                       str(budget), *(a.drill for a in group)], capture_output=True, text=True,
                                      env={**os.environ, "OMP_NUM_THREADS": "1"}, timeout=budget * 3 + 300)
                found = json.loads(out.read_text()) if proc.returncode == 0 and out.is_file() else None
                why = (proc.stderr or proc.stdout)[-800:]
            except subprocess.TimeoutExpired:
                found, why = None, f"the hunt ran past {budget * 3 + 300:.0f} s of wall time"
        share = (time.monotonic() - start) / len(group)
        hunted: list[tuple[DrillAudit, list[Route]]] = []
        for a in group:
            a.seconds += share
            if found is None:
                a.findings.append(Finding("route", "hunt", "the route hunt could not run", verdict="error",
                                          error=why))
                hunted.append((a, []))
                continue
            mine = found[a.drill]
            a.routes_hunted, a.routes_not_hunted = mine["hunted"], mine["not_hunted"]
            a.routes_tried, a.routes_complete, a.hunt_crashed = mine["tried"], mine["complete"], mine["crashed"]
            hunted.append((a, [Route(**r) for r in mine["routes"]]))
        if progress is not None:
            progress(f"{', '.join(a.drill for a in group)}: "
                     f"{sum(len(r) for _, r in hunted)} routes in {hunted[0][0].routes_tried} callables")
        return hunted

    groups = [g for g in (audits[i::max(1, plan.processes)] for i in range(max(1, plan.processes))) if g]
    with ThreadPoolExecutor(len(groups)) as pool:
        return [pair for pairs in pool.map(one, groups) for pair in pairs]


def _call_text(route: Route) -> str:
    call = f"{route.path}(*args, **kwargs)" if not route.before else f"{route.path}(x.transpose(0, 1), ...)"
    return call if not route.after else f"{route.after} of {call}"


def route_source(stub_source: str, route: Route) -> str:
    """A drill file whose ``route.function`` is the route and whose other functions
    stay stubs: the answer a student who found the route would hand in."""
    from grader.authoring.audit.do_nothing import public_functions

    lines = ['"""A route found by torchdrill audit."""', "import importlib", "import itertools", "import torch", "",
             "def _resolve(path):",
             "    parts = path.split('.')",
             "    for i in range(len(parts), 0, -1):",
             "        try:",
             "            obj = importlib.import_module('.'.join(parts[:i]))",
             "            break",
             "        except ImportError:",
             "            continue",
             "    for part in parts[i:]:",
             "        obj = getattr(obj, part)",
             "    return obj", ""]
    for name in public_functions(stub_source):
        if name != route.function:
            lines += [f"def {name}(*args, **kwargs):", "    raise NotImplementedError", ""]
    before = ("    i = next(k for k, a in enumerate(args) if isinstance(a, torch.Tensor))\n"
              "    args = (*args[:i], args[i].transpose(0, 1), *args[i + 1:])\n") if route.before else ""
    after = {"": "answer", "transpose": "answer.transpose(-1, -2)", "neg": "-answer",
             "input-minus": "next(a for a in args if isinstance(a, torch.Tensor)) - answer",
             "log": "answer.log()", "exp": "answer.exp()", "list": "list(answer)"}[route.after]
    lines += [f"def {route.function}(*args, **kwargs):", before.rstrip("\n") if before else "    pass",
              f"    answer = _resolve({route.path!r})(*args, **kwargs)", f"    return {after}", ""]
    return "\n".join(lines)
