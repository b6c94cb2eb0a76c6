"""One call of a student's function under the grading contract.

``guarded_call`` runs the function with the drill's forbidden APIs refused
(``grader.contract.forbid``) and turns what it raised into the grading outcome:
``NotImplementedError`` becomes ``NotAttempted``, a forbidden API a failed
property (even when the student caught the refusal), anything else
(``SystemExit`` and pytest's skip included) a ``StudentError`` with the
student's own traceback. The ``impl`` object, the rank harness and sandbox
workers all call student code through it.
"""

from __future__ import annotations

import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from grader.contract.forbid import Forbidden
from grader.contract.loader import student_traceback
from grader.core.i18n import Message
from grader.core.outcomes import NotAttempted, StudentError, TimedOut


def guarded_call(fn: Callable[..., Any], what: str, path: Path, forbidden: Forbidden,
                 args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    """``fn(*args, **kwargs)`` with the drill's forbidden APIs refused, and what it
    raised turned into the grading outcome (see the module docstring)."""
    with forbidden.guard() as uses:
        try:
            result = fn(*args, **kwargs)
        except NotImplementedError as exc:
            said = {"what": what, "error": str(exc)}
            raise NotAttempted(Message("{what} raised NotImplementedError: {error}", said) if str(exc).strip()
                               else Message("{what} raised NotImplementedError", said)) from None
        except (TimedOut, KeyboardInterrupt):
            raise
        except BaseException as exc:  # noqa: BLE001 - anything the student raises
            if uses:
                raise uses[0].failure(what) from None
            text = student_traceback(exc, path) or "".join(
                traceback.format_exception_only(type(exc), exc))
            raise StudentError(what, exc, text) from None
    if uses:
        raise uses[0].failure(what)
    return result


MAX_TIMEOUTS = 2  # calls of one function past the per-call limit before it is no longer called


class CallTimedOut(TimedOut):
    """A call ran past the per-call limit (the test's own clock raises plain ``TimedOut``)."""


def refuse_after_timeouts(timeouts: int, what: str, limit: float | None) -> None:
    """Raise ``TimedOut`` without calling ``what`` once ``MAX_TIMEOUTS`` earlier calls of
    it ran past the per-call limit: in a worker and in this process alike, its remaining
    properties are then timed out at once instead of costing the limit each."""
    if timeouts >= MAX_TIMEOUTS:
        raise TimedOut(Message("{what} was not called: {timeouts} earlier calls ran past the "
                               "{limit:g} s limit per call", {"what": what, "timeouts": timeouts, "limit": limit or 0}))


# The test's own clock (``grader.grading.budgets._Clocks``) shares ITIMER_REAL with
# ``call_clock``. Its timer may fire early, only to read what the drill's budget has been
# charged, so it says here (a ``time.monotonic()`` time) when it ends the test at the latest.
_outer_deadline: float | None = None


def outer_deadline(at: float | None) -> None:
    """The test clock's latest end (``time.monotonic()``), or None when no test clock runs."""
    global _outer_deadline
    _outer_deadline = at


@contextmanager
def call_clock(limit: float | None, what: str) -> Iterator[None]:
    """Raise ``TimedOut`` in this (main) thread when the block runs past ``limit``
    seconds: the in-process twin of the sandbox's per-call limit, so a loop that never
    ends costs one property, not the whole drill. The test's own clock (an outer
    ``ITIMER_REAL``) is kept: it is re-armed with what was left of it afterwards, and a
    call that would outlast its latest end (``outer_deadline``; else its timer) is left
    to it. No limit (``None`` or 0), another thread, or no ``setitimer``: the block runs
    as it is."""
    if not limit or threading.current_thread() is not threading.main_thread() \
            or not hasattr(signal, "setitimer"):
        yield
        return
    outer_left, _ = signal.getitimer(signal.ITIMER_REAL)
    outer_ends = outer_left if _outer_deadline is None else _outer_deadline - time.monotonic()
    if outer_left and outer_ends <= limit:
        yield
        return

    def expire(signum: int, frame: FrameType | None) -> None:
        signal.setitimer(signal.ITIMER_REAL, 1.0)  # again, in case the student swallows it
        raise CallTimedOut(Message("{what} ran past the {limit:g} s limit per call (an endless loop, or "
                                   "far more work than the drill needs)", {"what": what, "limit": limit}))

    previous = signal.signal(signal.SIGALRM, expire)
    started = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_left:
            signal.setitimer(signal.ITIMER_REAL, max(outer_left - (time.monotonic() - started), 0.001))
