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

import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from grader.contract.forbid import Forbidden
from grader.contract.loader import student_traceback
from grader.core.outcomes import NotAttempted, StudentError, TimedOut


def guarded_call(fn: Callable[..., Any], what: str, path: Path, forbidden: Forbidden,
                 args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    """``fn(*args, **kwargs)`` with the drill's forbidden APIs refused, and what it
    raised turned into the grading outcome (see the module docstring)."""
    with forbidden.guard() as uses:
        try:
            result = fn(*args, **kwargs)
        except NotImplementedError as exc:
            raise NotAttempted(f"{what} raised NotImplementedError: {exc}".rstrip(": ")) from None
        except (TimedOut, KeyboardInterrupt):
            raise
        except BaseException as exc:  # noqa: BLE001 - anything the student raises
            if uses:
                raise AssertionError(uses[0].message(what)) from None
            text = student_traceback(exc, path) or "".join(
                traceback.format_exception_only(type(exc), exc))
            raise StudentError(what, exc, text) from None
    if uses:
        raise AssertionError(uses[0].message(what))
    return result
