"""The course grades itself: the reference scores 100%, the stubs 0% ("not attempted"),
and grading is deterministic (a serial run and a two-worker run agree exactly; a run
without shrinking gives the same scores, property by property)."""

from __future__ import annotations

import pytest

from grader.results import outcomes_only, verdicts
from grader.tests.grading import REPO, run_grade

pytestmark = pytest.mark.xdist_group("self-check")


@pytest.fixture(scope="module")
def reference_results(tmp_path_factory):
    return run_grade(REPO / "reference", tmp_path_factory.mktemp("reference"))


def test_reference_scores_full_marks(reference_results):
    wrong = {
        e["id"]: [(t["name"], t["outcome"], t["message"][:300]) for t in e["tests"]
                  if t["outcome"] not in ("passed", "not_run")]
        for e in reference_results["exercises"] if e["score"] != e["max_score"]
    }
    assert not wrong, f"the reference loses points: {wrong}"
    assert reference_results["score"] == reference_results["max_score"] > 0


def test_only_hardware_tests_are_not_run(reference_results):
    for e in reference_results["exercises"]:
        for t in e["tests"]:
            if t["outcome"] == "not_run":
                assert "cuda" in t["markers"], f"{e['id']}::{t['name']} was not run: {t['message']}"


def test_stubs_score_zero_not_attempted(tmp_path):
    results = run_grade(REPO / "exercises", tmp_path)
    assert results["score"] == 0
    for e in results["exercises"]:
        assert e["status"] == "not_attempted", f"{e['id']} is {e['status']}"
        for t in e["tests"]:
            assert t["outcome"] in ("not_attempted", "not_run"), (
                f"{e['id']}::{t['name']} is {t['outcome']} on the stub: {t['message'][:300]}")


def test_serial_and_parallel_grading_agree(tmp_path):
    """Same submission, same results: failures, messages and counterexamples included."""
    submission = tmp_path / "half_done"
    for src in sorted((REPO / "grader" / "tests" / "mutants").rglob("*.py"))[::4]:
        drill = src.parent.relative_to(REPO / "grader" / "tests" / "mutants")
        target = submission / f"{drill}.py"
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(src.read_bytes())
    serial = run_grade(submission, tmp_path / "serial", "-n", "0")
    parallel = run_grade(submission, tmp_path / "parallel", "-n", "2")
    assert outcomes_only(serial) == outcomes_only(parallel)
    assert any(t["outcome"] == "failed" for e in serial["exercises"] for t in e["tests"])
    # Without shrinking every property passes or loses exactly as before; only what a
    # failure shows may differ (its counterexample, and even its kind: the shrinker can
    # walk from a wrong answer to a smaller input that raises, failed -> error).
    unshrunk = run_grade(submission, tmp_path / "no_shrink", "-n", "2", "--no-shrink")
    assert unshrunk["environment"]["shrink"] is False and serial["environment"]["shrink"] is True
    assert verdicts(unshrunk) == verdicts(serial)



def test_reference_scores_full_marks_in_the_sandbox(reference_results, tmp_path):
    """The same tests against a confined worker: the same verdict for every property."""
    boxed = run_grade(REPO / "reference", tmp_path, "--isolation", "sandbox")
    isolation = boxed["environment"]["isolation"]
    assert isolation["mode"] == "sandbox" and reference_results["environment"]["isolation"]["mode"] == "none"
    assert verdicts(boxed) == verdicts(reference_results)
    assert boxed["score"] == boxed["max_score"]
