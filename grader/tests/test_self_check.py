"""The course grades itself: the reference scores 100% in-process. The same reference,
sandboxed: ``test_sandboxed_reference.py``; a serial and a parallel grading agreeing:
``test_determinism.py`` (three files, so the two test workers can take them side by
side). The stubs score 0%, every property "not attempted", in the grading a released
handout makes of itself with its own grader
(``test_release.py::test_a_copied_handout_grades_itself_and_scores_the_stubs_zero``).

Each grading here is made once per test session (``grader.tests.shared``): other
modules read the same reference grading.
"""

from __future__ import annotations

import pytest

from grader.core.results_json import Results
from grader.tests.grading import REPO, run_grade
from grader.tests.shared import shared


def reference_results(factory: pytest.TempPathFactory) -> Results:
    """The reference, graded in-process with every property (shared by the session)."""
    return shared(factory, "reference", lambda folder: run_grade(REPO / "reference", folder))


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
