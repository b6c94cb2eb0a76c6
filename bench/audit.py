"""How long `torchdrill audit` takes per drill, and what it finds.

    python bench/audit.py [DRILL ...] [--mutants N] [--seed S] [-j N] [--no-routes]

Audits the drills (default: all) in one run and prints a markdown table for
docs/benchmarks.md: per drill, mutants killed of those graded (and of all), the
accepted findings, do-nothing answers at 0, routes found and closed, the seconds the
drill's candidates and hunt took, and that time as a multiple of the reference's own
grading time (tests/reference_times.json), so a figure from a noisy machine still
says something; then the whole run's wall and CPU time.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.authoring.audit.command import resolve_drills  # noqa: E402
from grader.authoring.audit.run import Plan, audit  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("drills", nargs="*")
    parser.add_argument("--mutants", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-j", "--processes", type=int, default=2)
    parser.add_argument("--route-budget", type=float, default=60.0)
    parser.add_argument("--no-routes", action="store_true")
    args = parser.parse_args()
    drills = resolve_drills(ROOT, args.drills)
    reference = json.loads((ROOT / "tests/reference_times.json").read_text())["drills"]
    start, cpu = time.perf_counter(), _children_cpu()
    audits = audit(ROOT, drills, Plan(args.seed, args.mutants, not args.no_routes, args.processes, args.route_budget))
    wall, cpu = time.perf_counter() - start, _children_cpu() - cpu
    print("| drill | mutants killed | accepted | do-nothing at 0 | routes closed | unexplained | seconds | x reference |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for a in audits:
        s = a.summary()
        ratio = a.seconds / reference[a.drill]["seconds"] if a.drill in reference else float("nan")
        print(f"| {a.drill} | {s['killed']} / {s['mutants_graded']} ({a.mutants_total}) | {s['accepted']} | "
              f"{s['do_nothing_zero']} / {s['do_nothing']} | {s['routes_closed']} / {s['routes']} | {s['unexplained']} | "
              f"{a.seconds:.1f} | {ratio:.0f}x |")
    print(f"\n{len(audits)} drills: {wall:.0f} s wall, {cpu:.0f} s CPU in the audit's processes "
          f"({args.processes} at a time, seed {args.seed}, mutants {args.mutants or 'all'}, "
          f"routes {'off' if args.no_routes else f'{args.route_budget:g} s budget per drill'})")
    return 0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    sys.exit(main())
