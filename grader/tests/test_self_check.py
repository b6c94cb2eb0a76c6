"""The course grades itself: the reference scores 100% (in-process and sandboxed), the
stubs 0% ("not attempted"), and grading is deterministic (a serial run and a
two-worker run agree exactly; a run without shrinking gives the same scores,
property by property).

Each grading here is made once per test session (``grader.tests.shared``): other
modules read the same reference grading.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader.core.results import Results, outcomes_only, verdicts
from grader.core.stubs import write_stubs
from grader.tests.grading import REPO, run_grade
from grader.tests.shared import shared

# A half-finished submission for the determinism check: a mutant of each of these
# drills (failures to shrink, across topics, a distributed one with real gloo ranks
# among them) and nothing else. Mutants that lose few properties: shrinking every
# failure is most of such a grading's time (the first mutant of each drill lost 20
# properties and took 17.1 s to grade serially; these lose 10 and take 8.3 s).
HALF_DONE = {"tensors/one_hot": "classes_is_max", "tensors/broadcast": "vague_clash_message",
             "losses/metrics": "pearson_upcasts_half", "distributed/sampler": "seed_without_epoch"}


def reference_results(factory: pytest.TempPathFactory) -> Results:
    """The reference, graded in-process with every property (shared by the session)."""
    return shared(factory, "reference", lambda folder: run_grade(REPO / "reference", folder))


def sandboxed_reference_results(factory: pytest.TempPathFactory) -> Results:
    return shared(factory, "reference-sandbox",
                  lambda folder: run_grade(REPO / "reference", folder, "--isolation", "sandbox"))


def test_reference_scores_full_marks(tmp_path_factory):
    results = reference_results(tmp_path_factory)
    wrong = {
        e["id"]: [(t["name"], t["outcome"], t["message"][:300]) for t in e["tests"]
                  if t["outcome"] not in ("passed", "not_run")]
        for e in results["exercises"] if e["score"] != e["max_score"]
    }
    assert not wrong, f"the reference loses points: {wrong}"
    assert results["score"] == results["max_score"] > 0


def test_every_drill_has_a_budget_from_the_reference(tmp_path_factory):
    """tests/reference_times.json is current: every drill's budget is derived from the
    reference's time on its tests as they are (a changed test file falls back to the
    default budget until ``bench/reference_times.py`` is run again)."""
    budgets = reference_results(tmp_path_factory)["environment"]["budgets"]
    stale = {d: s for d, s in budgets["source"].items() if s != "reference"}
    assert not stale, f"run bench/reference_times.py: these drills' tests changed since {stale}"


def test_only_hardware_tests_are_not_run(tmp_path_factory):
    for e in reference_results(tmp_path_factory)["exercises"]:
        for t in e["tests"]:
            if t["outcome"] == "not_run":
                assert "cuda" in t["markers"], f"{e['id']}::{t['name']} was not run: {t['message']}"


def test_stubs_score_zero_not_attempted(tmp_path):
    """The course's stubs as handed out (pristine even where a learner has filled in
    exercises/: ``grader.core.stubs``)."""
    write_stubs(REPO, tmp_path / "stubs")
    results = run_grade(tmp_path / "stubs", tmp_path / "out", "--isolation", "none")
    assert results["score"] == 0
    for e in results["exercises"]:
        assert e["status"] == "not_attempted", f"{e['id']} is {e['status']}"
        for t in e["tests"]:
            assert t["outcome"] in ("not_attempted", "not_run"), (
                f"{e['id']}::{t['name']} is {t['outcome']} on the stub: {t['message'][:300]}")


def _half_done(folder: Path) -> Path:
    mutants = REPO / "grader" / "tests" / "mutants"
    for drill, mutant in HALF_DONE.items():
        target = folder / f"{drill}.py"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(mutants / drill / f"{mutant}.py", target)
    return folder


def test_serial_and_parallel_grading_agree(tmp_path):
    """Same submission, same results: failures, messages and counterexamples included."""
    submission = _half_done(tmp_path / "half_done")
    only = ("--only", *HALF_DONE, "--isolation", "none")
    serial = run_grade(submission, tmp_path / "serial", "-n", "0", *only)
    parallel = run_grade(submission, tmp_path / "parallel", "-n", "2", *only)
    assert outcomes_only(serial) == outcomes_only(parallel)
    assert any(t["outcome"] == "failed" for e in serial["exercises"] for t in e["tests"])
    # Without shrinking every property passes or loses exactly as before; only what a
    # failure shows may differ (its counterexample, and even its kind: the shrinker can
    # walk from a wrong answer to a smaller input that raises, failed -> error).
    unshrunk = run_grade(submission, tmp_path / "no_shrink", "-n", "2", "--no-shrink", *only)
    assert unshrunk["environment"]["shrink"] is False and serial["environment"]["shrink"] is True
    assert verdicts(unshrunk) == verdicts(serial)


def test_reference_scores_full_marks_in_the_sandbox(tmp_path_factory):
    """The same tests against a confined worker: the same verdict for every property."""
    in_process = reference_results(tmp_path_factory)
    boxed = sandboxed_reference_results(tmp_path_factory)
    isolation = boxed["environment"]["isolation"]
    assert isolation["mode"] == "sandbox" and in_process["environment"]["isolation"]["mode"] == "none"
    assert verdicts(boxed) == verdicts(in_process)
    assert boxed["score"] == boxed["max_score"]
