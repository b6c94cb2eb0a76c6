"""Test outcomes and the exceptions that carry them out of a test.

A test's outcome is decided by what it raised, not by string matching:

- ``NotAttempted`` (the student's code raised ``NotImplementedError``, or the file
  is missing) is a ``BaseException`` so that hypothesis stops at the first example
  instead of shrinking a stub, and a student's ``except Exception`` cannot hide it.
- ``StudentError`` wraps anything the student's code raised; hypothesis shrinks it
  like a failure, so the report shows the smallest input that crashes.
- ``SubmissionError``: the file could not be imported (syntax error, import error). A
  ``BaseException`` too: every example would fail the same way, so hypothesis must not
  shrink it, and the grading reports it once per drill (``grader.grading.judge``).
- ``TimedOut``: the grader's per-test clock ran out.
- ``BrokenContract``: a sandboxed worker answered outside the grading contract (an
  oversize or malformed answer). A ``BaseException``, like ``NotAttempted``, so the
  test ends at once, and never mistaken for an exception the student was asked to raise.
- ``AssertionError`` (including ``grader.contract.expect.Mismatch``): a wrong answer.
"""

from __future__ import annotations

from typing import Any, Self

from grader.core import engine_phrases
from grader.core.i18n import N_, Message

PASSED = "passed"
FAILED = "failed"
ERROR = "error"
NOT_ATTEMPTED = "not_attempted"
TIMED_OUT = "timed_out"
NOT_RUN = "not_run"

TEST_OUTCOMES = (PASSED, FAILED, ERROR, NOT_ATTEMPTED, TIMED_OUT, NOT_RUN)
EXERCISE_STATUSES = (PASSED, "partial", FAILED, ERROR, NOT_ATTEMPTED, NOT_RUN)

# Why a ``cuda`` test is not run here. Not "run tox -e cuda": that grades the course's
# reference, not the student's work; the instructor's CUDA runner grades the student's.
CUDA_REASON = N_("needs a CUDA device, and this machine has none: your instructor's CUDA runner grades it")
GLOO_REASON = N_("needs torch.distributed with gloo, which this torch build lacks")


def worded(exc: BaseException) -> Message | None:
    """The ``Message`` an outcome's exception was raised with (its English text is
    ``str(exc)``), or None where it was raised with text alone."""
    kept = getattr(exc, "worded", None)
    return kept if isinstance(kept, Message) else None


class _Outcome(BaseException):
    """An outcome raised with text, or with a ``Message`` kept for the report to
    render in any language (``str()`` is its English either way), and ``more``: what
    follows it as written in every language (the student's traceback), on lines of its own."""

    def __init__(self, text: str | Message = "", *rest: Any, more: str = ""):
        self.worded = text if isinstance(text, Message) else None
        self.more = more
        super().__init__(str(text) + (f"\n{more}" if more else ""), *rest)

    def again(self) -> Self:
        """The same outcome, to raise anew (a file that did not load, for each property)."""
        return type(self)(self.worded or str(self), more=self.more if self.worded else "")


class NotAttempted(_Outcome):
    """The drill (or the function a test needs) is still a stub or missing."""


class TimedOut(_Outcome):
    """Raised by the grader's clock inside a test that ran past its limit."""


class BrokenContract(_Outcome):
    """A worker's answer broke the data contract (too big, malformed): an error."""


class SubmissionError(_Outcome):
    """The submission's file for an exercise cannot be loaded."""


class StudentError(Exception):
    """The student's function raised; ``original`` is what it raised."""

    def __init__(self, function: str, original: BaseException, traceback_text: str):
        self.function = function
        self.original = original
        self.traceback_text = traceback_text
        self.worded = Message(engine_phrases.STUDENT_RAISED,
                              {"function": function, "kind": type(original).__name__, "error": str(original)})
        super().__init__(str(self.worded))
