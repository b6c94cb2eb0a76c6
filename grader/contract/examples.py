"""Which examples a grading draws: the public ranges, or the official grading's wider ones.

An official grading (one given a course secret, ``grader.core.course_secret``) draws its
examples from seeds no student knows, and also from wider ranges than the public
run: larger sides, more classes, longer sequences. An answer tuned to what the
public tests draw (wrong whenever ``num_classes > 6``, say) then meets inputs it
never saw. The wider ranges are no secret; the examples drawn from them are.

The course's strategies ask ``wide(n)`` for a range's bound; the grading session
switches widening on (``widen``) before the tests are collected, for the whole
process: a process grades either officially or publicly.
"""

from __future__ import annotations

import math

FACTOR = 1.5  # an official grading's bounds, against the public ones

_widened = False


def widen(on: bool = True) -> None:
    """Switch the wider ranges on (an official grading) or off (the public run)."""
    global _widened
    _widened = on


def widened() -> bool:
    """Whether this process draws the official grading's wider ranges."""
    return _widened


def wide(bound: int, official: int | None = None) -> int:
    """``bound`` in the public run; in an official grading ``official`` if given, else
    ``bound`` times ``FACTOR``, rounded up (and at least one more)."""
    if not _widened:
        return bound
    if official is not None:
        return official
    return max(bound + 1, math.ceil(bound * FACTOR))
