"""Same submission, same results: a serial and a two-worker grading agree exactly, and
one without shrinking gives the same verdict for every property."""

from __future__ import annotations

import shutil
from pathlib import Path

from grader.core.results_json import verdicts
from grader.tests.grading import REPO, outcomes_only, run_grade

# A half-finished submission for the determinism check: a mutant of each of these
# drills (failures to shrink, across topics, a distributed one with real gloo ranks
# among them) and nothing else. Mutants that lose few properties: shrinking every
# failure is most of such a grading's time (a drill's first mutant loses more
# properties than these, and its grading time grows with every one it loses).
HALF_DONE = {"tensors/one_hot": "classes_is_max", "tensors/broadcast": "vague_clash_message",
             "losses/metrics": "pearson_upcasts_half", "distributed/sampler": "seed_without_epoch"}


def half_done(folder: Path) -> Path:
    mutants = REPO / "grader" / "tests" / "mutants"
    for drill, mutant in HALF_DONE.items():
        target = folder / f"{drill}.py"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(mutants / drill / f"{mutant}.py", target)
    return folder


def test_serial_and_parallel_grading_agree(tmp_path):
    """Same submission, same results: failures, messages and counterexamples included."""
    submission = half_done(tmp_path / "half_done")
    only = ("--only", *HALF_DONE, "--isolation", "none")
    serial = run_grade(submission, tmp_path / "serial", "-n", "0", *only)
    parallel = run_grade(submission, tmp_path / "parallel", "-n", "2", *only)
    assert outcomes_only(serial) == outcomes_only(parallel)
    assert any(t["outcome"] == "failed" for e in serial["exercises"] for t in e["tests"])
    # Without shrinking every property passes or loses exactly as before; only what a
    # failure shows may differ (its counterexample, and even its kind: the shrinker can
    # walk from a wrong answer to a smaller input that raises, failed -> error).
    unshrunk = run_grade(submission, tmp_path / "no_shrink", "-n", "0", "--no-shrink", *only)
    assert unshrunk["environment"]["shrink"] is False and serial["environment"]["shrink"] is True
    assert verdicts(unshrunk) == verdicts(serial)
