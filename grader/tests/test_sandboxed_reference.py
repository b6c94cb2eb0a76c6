"""The reference graded against confined workers scores 100%, with the same verdict
as in-process for every property (``test_self_check.py`` makes that grading)."""

from __future__ import annotations

import pytest

from grader.core.results import Results, verdicts
from grader.tests.grading import REPO, run_grade
from grader.tests.shared import shared
from grader.tests.test_self_check import reference_results


def sandboxed_reference_results(factory: pytest.TempPathFactory) -> Results:
    return shared(factory, "reference-sandbox",
                  lambda folder: run_grade(REPO / "reference", folder, "--isolation", "sandbox"))


def test_reference_scores_full_marks_in_the_sandbox(tmp_path_factory):
    """The same tests against a confined worker: the same verdict for every property.
    The sandboxed grading first: the other test worker is making the in-process one."""
    boxed = sandboxed_reference_results(tmp_path_factory)
    in_process = reference_results(tmp_path_factory)
    isolation = boxed["environment"]["isolation"]
    assert isolation["mode"] == "sandbox" and in_process["environment"]["isolation"]["mode"] == "none"
    assert verdicts(boxed) == verdicts(in_process)
    assert boxed["score"] == boxed["max_score"]
