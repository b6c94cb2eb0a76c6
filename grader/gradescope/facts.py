"""The Gradescope autograder's shared facts: where the zip's files lie under
``/autograder`` (written by ``torchdrill gradescope-autograder``, in
``grader.gradescope.autograder``; read by the run on Gradescope, in
``grader.gradescope.run``), and the two answers a run writes when there is no
grading to report: a submission that cannot be graded scores 0 with the reason, a
grader that failed gives no score (the zip's ``run_autograder`` carries that one
too, for a Python that cannot start). The build and the run both read these.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from grader.core.i18n import _

ROOT_ENV = "TORCHDRILL_AUTOGRADER_ROOT"  # replaces /autograder (a test runs run_autograder in a fake tree)
DEFAULT_ROOT = "/autograder"
PAYLOAD = "torchdrill"  # the folder of the zip (/autograder/source/torchdrill) with our files
CONFIG = "config.json"
COURSE = "course"
SECRET = "secret"  # the course secret (grader.core.course_secret), beside config.json
STUDENT = "submission"
GRADER_FAILED = "grader_failed"
NOT_GRADABLE = "not_gradable"


def not_gradable_result(reason: str, drills: list[str]) -> dict[str, Any]:
    """Zero, and why: in the language of the running command (``grader.core.i18n``)."""
    example = drills[0] if drills else "topic/drill"
    return {
        "score": 0.0,
        "output": (_("Your submission could not be graded: {reason}", reason=reason) + "\n\n"
                   + _("Hand in your exercises/ folder (or a .zip of it, or your notebook), with each drill "
                       "at its place, e.g. {example}.py, or the drill files themselves ({name}.py).",
                       example=example, name=PurePosixPath(example).name)),
        "output_format": "text", "visibility": "visible", "stdout_visibility": "hidden",
        "tests": [], "extra_data": {"torchdrill": NOT_GRADABLE},
    }


def grader_failed_result(reason: str) -> dict[str, Any]:
    """No score: a grader that failed is never the student's zero (in the language of the
    running command)."""
    return {
        "output": (_("The autograder itself failed, so this submission was not graded and has no "
                     "score yet. This is a problem with the grader, not with your work: your "
                     "instructor can see it and will grade your submission again.") + f"\n\n({reason})"),
        "output_format": "text", "visibility": "visible", "stdout_visibility": "hidden",
        "tests": [], "extra_data": {"torchdrill": GRADER_FAILED},
    }
