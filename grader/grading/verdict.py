"""A graded test's outcome, from what it raised, and what the report keeps of it.

``classify`` maps the exception a test ended with to an outcome
(``grader.core.outcomes``) and a message; ``counterexample`` keeps hypothesis'
failing case, the calls the test made to the submission and a ``Mismatch``'s
got/expected/diff; ``capped`` keeps the submission's printed output shown, never
interpreted, and bounded.
"""

from __future__ import annotations

import re
from typing import Any

from grader.contract.expect import Mismatch
from grader.contract.impl import Implementation
from grader.core.i18n import Message
from grader.core.outcomes import (
    ERROR,
    FAILED,
    NOT_ATTEMPTED,
    PASSED,
    TIMED_OUT,
    BrokenContract,
    NotAttempted,
    StudentError,
    SubmissionError,
    TimedOut,
    worded,
)

MAX_MESSAGE = 4000  # characters of a test's message kept
MAX_OUTPUT = 2000  # characters of captured stdout/stderr kept per test


def classify(exc: BaseException | None) -> tuple[str, str, Message | None]:
    """(outcome, message, the message as kept for any language or None) for what a
    graded test raised."""
    if exc is None:
        return PASSED, "", None
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return classify(exc.exceptions[0])
    if isinstance(exc, NotAttempted):
        return NOT_ATTEMPTED, str(exc), worded(exc)
    if isinstance(exc, TimedOut):
        return TIMED_OUT, str(exc), worded(exc)
    if isinstance(exc, (BrokenContract, SubmissionError)):
        return ERROR, str(exc), worded(exc)
    if isinstance(exc, StudentError):  # the traceback is the student's: kept as written, after the message
        return ERROR, f"{exc}\n{exc.traceback_text}".strip(), worded(exc)
    if isinstance(exc, AssertionError):
        text = str(exc).strip()
        if not text:
            return FAILED, "assertion failed", Message("assertion failed")
        return FAILED, text, worded(exc)
    kept = Message("the test could not check the result: {kind}: {error}",
                   {"kind": type(exc).__name__, "error": str(exc)})
    return FAILED, str(kept), kept


def _failing_case(exc: BaseException) -> str:
    notes = getattr(exc, "__notes__", []) or []
    return "\n".join(n for n in notes if n.startswith(("Failing test case", "Falsifying")))


def counterexample(impl: Any, exc: BaseException) -> dict[str, Any] | None:
    """What the report shows of a failure: hypothesis' failing case, the calls the
    test made through ``impl`` (its last example's), got/expected/diff."""
    out: dict[str, Any] = {}
    case = _failing_case(exc)
    if case:
        out["example"] = case
    if isinstance(impl, Implementation) and impl.calls:
        out["calls"] = impl.calls
    if isinstance(exc, Mismatch):
        out.update(exc.details)
    return out or None


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def capped(text: str) -> str:
    """At most ``MAX_OUTPUT`` characters, control characters (terminal escapes,
    bells) shown as ``\\x1b`` and the like: output is shown, never interpreted."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    if len(text) <= MAX_OUTPUT:
        return text
    return text[:MAX_OUTPUT] + f"\n... ({len(text) - MAX_OUTPUT} more characters not kept)"
