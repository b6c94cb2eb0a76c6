"""The reference graded against confined workers on an official grading (a course
secret's examples, wider ranges) scores 100%, with the same verdict as in-process on
the public examples for every property (``test_self_check.py`` makes that grading)."""

from __future__ import annotations

import pytest

from grader.core.results_json import Results, verdicts
from grader.tests.grading import REPO, run_grade
from grader.tests.shared import shared
from grader.tests.test_self_check import reference_results


def sandboxed_reference_results(factory: pytest.TempPathFactory) -> Results:
    """The reference graded as a class is: sandboxed, on an official grading (examples
    from a course secret, wider ranges). The in-process grading draws the public ones."""
    def make(folder):
        secret_file = folder / "secret"
        secret_file.write_text("self-check-course-secret-0123456789")
        return run_grade(REPO / "reference", folder / "out", "--isolation", "sandbox",
                         "--secret-file", str(secret_file))

    return shared(factory, "reference-sandbox", make)


def test_reference_scores_full_marks_in_the_sandbox(tmp_path_factory):
    """The same tests against a confined worker: the same verdict for every property.
    The sandboxed grading first: the other test worker is making the in-process one."""
    boxed = sandboxed_reference_results(tmp_path_factory)
    in_process = reference_results(tmp_path_factory)
    isolation = boxed["environment"]["isolation"]
    assert isolation["mode"] == "sandbox" and in_process["environment"]["isolation"]["mode"] == "none"
    assert boxed["environment"]["examples"]["drawn"] == "secret"
    assert in_process["environment"]["examples"] == {"drawn": "public"}
    assert verdicts(boxed) == verdicts(in_process)
    assert boxed["score"] == boxed["max_score"]
