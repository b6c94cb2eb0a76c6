"""What a course's tests import: the public face of the grading contract.

A drill's properties (``tests/<topic>/test_<drill>.py``) are written against this module
alone, as a hypothesis user writes against ``hypothesis.strategies`` and never its
internals; import-linter holds every file under ``tests/`` to it, so the engine behind it
may move without a drill noticing.

- ``assert_same(got, expected, what=..., rtol=..., atol=...)``: compare an answer with
  the oracle's: exact types, dtypes and shapes, values within tolerance; a failure
  names what differs and keeps both sides for the counterexample.
- ``assert_same_dtype(got, expected, what=...)``: a form check of the type and dtype alone,
  worded as ``assert_same`` words them.
- ``stopped(failure)``: the failure of an ordinary comparison that rides with a property,
  as that property's failure ("stopped by another defect: ..."; ``tests/properties.py``).
- ``expect_raises(ExcType, when=...)``: the block must raise ``ExcType`` (from the
  student's code: ``StudentError`` carries it), the spec's error for an input.
- ``as_tuple``, ``is_tuple_of_ints``: read an answer that may be a list, tuple or ``Size``.
- ``wide(bound, official=None)``, ``widened()``: a strategy's bound, widened in an official
  grading (whose examples are drawn from wider ranges than the public run's).
- ``BatchSizes``: a forward pre-hook that records batch sizes, and crosses the sandbox.
- ``observed(effects)``: run a block and list what it changed of the global state
  (random generators, default dtype, grad mode), restoring it.
- ``StudentError``: what a call of the student's code raised, wrapped.

The fixtures ``impl`` (the submission's functions behind the contract) and ``ref`` (the
reference) come from the grading plugin; ``docs/writing-a-drill.md`` shows a whole drill.
"""

from __future__ import annotations

from grader.contract.effects import observed
from grader.contract.examples import wide, widened
from grader.contract.expect import as_tuple, assert_same, assert_same_dtype, expect_raises, is_tuple_of_ints, stopped
from grader.contract.harness import BatchSizes
from grader.core.outcomes import StudentError

__all__ = ["BatchSizes", "StudentError", "as_tuple", "assert_same", "assert_same_dtype", "expect_raises",
           "is_tuple_of_ints", "observed", "stopped", "wide", "widened"]
