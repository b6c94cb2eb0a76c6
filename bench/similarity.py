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

``--oversized`` measures the bounds instead (``similarity.COMPARED_FILE_BYTES``,
``COMPARED_SUBMISSION_BYTES``): a class of 5 (the same kinds of files), then the same
class with one student's ``tensors/one_hot.py`` the reference followed by functions
nobody calls, up to 1,000,000 bytes (it still scores full marks), each analysed with
the bounds and without them (as before they existed); and with the bounds, the class
with one student exactly at both (8 of their drill files padded to 64 KiB each: 512 KiB,
the most the analysis reads of anyone). It prints the fastest and the slowest of
``--repeat`` runs of each.

Run from the repository root: `python bench/similarity.py [-n 100]`, or
`python bench/similarity.py --oversized`.
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
from grader.tests.classroom import MUTANTS, disguise, drills, padded  # noqa: E402

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


def timed(sources: dict[str, dict[str, str]], results: dict,
          every_drill: bool = False) -> tuple[float, dict]:
    """Seconds the analysis takes, and what it found: of the drills in ``results`` (6 of
    them), or with ``every_drill`` of every drill of the course, as grade-all compares."""
    stubs = pristine_stubs(REPO)
    current = {sid: results for sid in sources}
    started = time.perf_counter()
    found = similarity.analyse(current, sources, stubs, drills=drills() if every_drill else None)
    return time.perf_counter() - started, found


OVERSIZED = "tensors/one_hot"  # the drill whose file --oversized pads
OVERSIZED_BYTES = 1_000_000


def oversized(repeat: int) -> None:
    """The similarity step of a class of 5 (every drill compared, as grade-all does), with
    and without a 1 MB file, with and without the bounds: the fastest and slowest of
    ``repeat`` runs of each."""
    sources, _ = make(5)
    results = json.loads((REPO / "grader" / "tests" / "data" / "half_finished_results.json").read_text())
    similarity.analyse({"a": results, "b": results}, {}, {})  # imports paid here
    big = {sid: dict(files) for sid, files in sources.items()}
    student = sorted(big)[0]
    big[student][f"{OVERSIZED}.py"] = padded((REPO / "reference" / f"{OVERSIZED}.py").read_text(), OVERSIZED_BYTES)
    bounds = (similarity.COMPARED_FILE_BYTES, similarity.COMPARED_SUBMISSION_BYTES)
    full = {sid: dict(files) for sid, files in sources.items()}
    for drill in drills()[:bounds[1] // bounds[0]]:
        full[student][f"{drill}.py"] = padded((REPO / "reference" / f"{drill}.py").read_text(), bounds[0])
    print(f"a class of 5, {len(drills())} drills; {student}'s {OVERSIZED}.py padded to {OVERSIZED_BYTES:,} bytes; "
          f"bounds {bounds[0] // 1024} KiB a file, {bounds[1] // 1024} KiB a submission; {repeat} runs each")
    for label, bounded in (("without the bounds (before)", False), ("with the bounds", True)):
        if not bounded:
            similarity.COMPARED_FILE_BYTES = similarity.COMPARED_SUBMISSION_BYTES = 2**62
        cases = [("no large file", sources), ("one 1 MB file", big)]
        if bounded:
            cases.append((f"one student at both bounds ({bounds[1] // bounds[0]} files of {bounds[0] // 1024} KiB)",
                          full))
        for name, class_sources in cases:
            runs = []
            for _ in range(repeat):
                seconds, found = timed(class_sources, results, every_drill=True)
                runs.append(seconds)
            skipped = ", ".join(f"{s['student']}'s {s['file']}" for s in found.get("skipped", [])) or "nothing"
            print(f"{label}, {name}: {min(runs):.2f}-{max(runs):.2f} s (left out: {skipped})")
        similarity.COMPARED_FILE_BYTES, similarity.COMPARED_SUBMISSION_BYTES = bounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=100, help="synthetic submissions (default 100)")
    parser.add_argument("--oversized", action="store_true",
                        help="time a class of 5 with and without a 1 MB file, with and without the bounds")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, with --oversized (default 3)")
    args = parser.parse_args()
    if args.oversized:
        oversized(args.repeat)
        return
    n = args.n
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
