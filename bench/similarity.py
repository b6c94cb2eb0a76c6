"""What grade-all's similarity evidence costs per submission.

Makes N synthetic submissions of every drill (default 100) in memory, each drill's file
one of: the reference disguised (local variables renamed, independent neighbouring
statements swapped, functions reordered, reformatted: ``grader/tests/classroom.py``'s
``disguise``, a different seed per student), an independent correct solution where
``grader/tests/data/similarity`` has one (disguised too), a known-wrong variant from
the mutant corpus, or the stub (left out of the comparison, as grade-all does). Every
student gets the same real results document (a half-finished submission's), so the
behaviour evidence reads real counterexamples. It then times
``grader.classroom.similarity.analyse``, the whole of what grade-all adds, on the
first N/2 and on all N submissions, and prints from that one run the cost per
submission, its ratio to a submission's grading (grade-all with one worker, as
docs/benchmarks.md records it), and how the cost grows from N/2 to N (pairs grow as N²).

Run from the repository root: `python bench/similarity.py [-n 100]`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from grader.classroom import similarity  # noqa: E402
from grader.classroom.classgrade import pristine_stubs  # noqa: E402
from grader.tests.classroom import MUTANTS, disguise, drills  # noqa: E402

GRADING_S = 432.2 / 16  # docs/benchmarks.md: grade-all, one worker, sandboxed: seconds per submission
INDEPENDENT = REPO / "grader" / "tests" / "data" / "similarity"


def make(n: int) -> tuple[dict[str, dict[str, str]], dict[str, int]]:
    """student -> drill file -> code; and how many files of each kind."""
    ids = drills()
    stubs = pristine_stubs(REPO)
    mutants = {d: sorted((MUTANTS / d).glob("*.py")) for d in ids}
    kinds = {"copy": 0, "independent": 0, "mutant": 0, "stub": 0}
    sources: dict[str, dict[str, str]] = {}
    for i in range(n):
        files = {}
        for j, drill in enumerate(ids):
            pick = (i + j) % 10
            alternative = INDEPENDENT / f"{drill}.py"
            if pick < 4:
                kind, code = "copy", disguise((REPO / "reference" / f"{drill}.py").read_text(), seed=i)
            elif pick < 6 and alternative.is_file():
                kind, code = "independent", disguise(alternative.read_text(), seed=i)
            elif pick < 9 and mutants[drill]:
                kind, code = "mutant", disguise(mutants[drill][i % len(mutants[drill])].read_text(), seed=i)
            else:
                kind, code = "stub", stubs[drill]
            kinds[kind] += 1
            files[f"{drill}.py"] = code
        sources[f"s{i:03d}"] = files
    return sources, kinds


def timed(sources: dict[str, dict[str, str]], results: dict) -> tuple[float, dict]:
    stubs = pristine_stubs(REPO)
    current = {sid: results for sid in sources}
    started = time.perf_counter()
    found = similarity.analyse(current, sources, stubs)
    return time.perf_counter() - started, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=100, help="synthetic submissions (default 100)")
    n = parser.parse_args().n
    sources, kinds = make(n)
    results = json.loads((REPO / "grader" / "tests" / "data" / "half_finished_results.json").read_text())
    similarity.analyse({"a": results, "b": results}, {}, {})  # imports (copydetect, pygments) paid here
    half = dict(list(sources.items())[: n // 2])
    t_half, _ = timed(half, results)
    t_all, found = timed(sources, results)
    files = sum(kinds.values())
    print(f"{n} submissions x {len(drills())} drills = {files} files: "
          + ", ".join(f"{k} {v}" for k, v in kinds.items()))
    pairs = sum(d["pairs"] for d in found["code"].values())
    flagged = sum(d["flagged"] for d in found["code"].values())
    print(f"code: {pairs} pairs compared, {flagged} flagged")
    for label, count, seconds in ((f"{n // 2} submissions", n // 2, t_half), (f"{n} submissions", n, t_all)):
        per = seconds / count
        print(f"{label}: {seconds:.2f} s, {per * 1000:.0f} ms per submission "
              f"({per / GRADING_S:.2%} of a submission's grading, {GRADING_S:.0f} s)")
    print(f"{n} vs {n // 2} submissions: {t_all / t_half:.2f}x the time for 2x the submissions "
          f"(4x the pairs)")


if __name__ == "__main__":
    main()
