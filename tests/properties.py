"""Every point is earned: checks that ride along with an oracle comparison.

The rule every property follows: no property may pass on an answer that is wrong on
every ordinary input. A form check (type, dtype, shape, device, stride), an error check
("raises ValueError when ..."), a no-mutation check, a protocol or count check, a
consistency or corner-case check on its own would give points to a do-nothing answer
(zeros of the right shape, "raise ValueError on every call", "return the input"). So
each of them runs, in the same hypothesis example, beside a comparison of the
function's answer on an ordinary valid input with the oracle (PyTorch, an invariant, or
the ``ref`` fixture in instructor-only tests).

How to use it::

    from tests.properties import anchored, boolean_twins, assert_no_shared_memory

    @given(valid_cases(), st.data())
    def test_negative_label_raises_value_error(impl, case, data):
        bad = with_negative_label(case, data)
        with anchored(lambda: impl.one_hot(case.labels, case.classes),          # ordinary call
                      lambda: F.one_hot(case.labels.long(), case.classes),      # its oracle
                      what="one_hot of valid labels (checked beside the error case)"):
            with expect_raises(ValueError, when="a label is negative"):
                impl.one_hot(bad, case.classes)

- ``anchored(call, oracle, what=..., **tolerance)`` is a context manager: the block is the
  property's own check; when it has passed, ``call()`` (the student's function on an
  ordinary valid input, usually the case the block's input was derived from) is compared
  with ``oracle()`` by ``grader.testing.assert_same`` (or by ``compare(got, expected,
  what)`` when given). Several anchors: ``with anchored(...), anchored(...):``. Anchor
  each function the block exercises with that same function.
- ``anchored(check)`` with no oracle: ``check()`` is itself the ordinary comparison (it
  raises ``AssertionError`` when the answer is wrong): boolean twins, a module run
  against the oracle's output, several functions at once.
- ``assert_ordinary(call, oracle, what=...)`` runs the same comparison at once, for a
  check that is not a block; ``assert_ordinary_answer(got, expected, what=...)`` for an
  answer already in hand (the same call's result, after the property's own check).
- A property fails for what its name says, or says which other defect stopped it. A
  failing block is the property's own failure (its check found what its name says is
  wrong). When the block held and the ordinary comparison fails, the message is
  "stopped by another defect: <the comparison's difference>": the answer is wrong where
  the drill's main properties look, and the report counts the failure with theirs.
- ``harder_than(call, oracle, what=...)`` anchors a comparison on a harder form of an
  ordinary input (large values, another memory layout, a lower precision): there the
  block cannot tell its own mistake from a wrong answer on the ordinary input, so when
  it fails the ordinary input is checked too, and a wrong answer there is reported
  instead ("stopped by another defect: ..."). Advice in the block's message ("subtract
  the max") then reaches only an answer that is right on the ordinary input; give it
  only where the answer shows the mistake it names (``tests.numerics.overflowed``).
- ``boolean_twins(call, expected, twin_call, what=..., twin_what=...)``: a boolean answer always meets a
  twin case whose answer is the opposite, in the same example, so "always True" and
  "always False" both fail.
- ``assert_no_shared_memory(got, *inputs, what=...)``: the result is neither an input
  nor a view of one (same storage), unless the spec says it may be.
- ``assert_arguments_unchanged(impl, what=...)``: the last call changed nothing of its
  arguments beyond what its spec lets it (the marker's ``mutates``). The grader undoes
  any other change at once (so oracles are always computed from what the test made) and
  says what it was in ``impl.mutations``: a "the inputs are left unchanged" property
  reads that, not the test's own objects.

The calls are zero-argument callables (lambdas) so that the anchor's call happens after
the block, and a student's error in it is reported like any other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch

from grader.testing import StudentError, assert_same, stopped

Compare = Callable[[Any, Any, str], None]


def assert_ordinary(call: Callable[[], Any], oracle: Callable[[], Any] | None = None, *,
                    what: str = "", compare: Compare | None = None, **tolerance: Any) -> None:
    """``call()`` (the student's answer on an ordinary valid input) must equal ``oracle()``.

    ``tolerance`` (``rtol``, ``atol``, ``equal_nan``) goes to ``assert_same``; ``compare``
    replaces it for answers ``assert_same`` cannot judge (a module to run, a set of
    allowed values): ``compare(got, expected, what)`` raises ``AssertionError`` when wrong.
    With ``oracle=None``, ``call()`` is the whole comparison and must raise when wrong.
    A failure reads "stopped by another defect: ..." (``grader.contract.expect.stopped``).
    """
    try:
        if oracle is None:
            call()
            return
        expected = oracle()
        got = call()
        if compare is not None:
            compare(got, expected, what)
        else:
            assert_same(got, expected, what=what, **tolerance)
    except AssertionError as failure:
        raise stopped(failure) from None


def assert_ordinary_answer(got: Any, expected: Any, *, what: str = "", compare: Compare | None = None,
                           **tolerance: Any) -> None:
    """``assert_ordinary`` for an answer in hand: the same call's result, compared with
    the oracle's ``expected`` after the property's own check."""
    assert_ordinary(lambda: got, lambda: expected, what=what, compare=compare, **tolerance)


@contextmanager
def anchored(call: Callable[[], Any], oracle: Callable[[], Any] | None = None, *,
             what: str = "", compare: Compare | None = None, **tolerance: Any) -> Iterator[None]:
    """Run the block (the property's own check), then ``assert_ordinary(call, oracle)``.

    The block's failure is reported first (it is the property's own, and the more
    specific message); a do-nothing answer that passes the block fails the ordinary
    comparison, which then says "stopped by another defect: ...".
    """
    yield
    assert_ordinary(call, oracle, what=what, compare=compare, **tolerance)


@contextmanager
def harder_than(call: Callable[[], Any], oracle: Callable[[], Any] | None = None, *,
                what: str = "", compare: Compare | None = None, **tolerance: Any) -> Iterator[None]:
    """``anchored`` for a block that compares the answer on a harder form of the ordinary
    input ``call`` takes (its values scaled, its memory layout changed, its precision
    lowered): when the block fails, the ordinary comparison is made too, and its failure
    ("stopped by another defect: ...") is reported instead of the block's, which cannot
    tell its own mistake from that one. The property fails either way: no point changes
    hands, and the block's message (and its advice) reaches only an answer that is right
    on the ordinary input."""
    try:
        yield
    except AssertionError:
        try:
            assert_ordinary(call, oracle, what=what, compare=compare, **tolerance)
        except StudentError:
            pass  # the ordinary call raised: the block's failure says more
        raise
    assert_ordinary(call, oracle, what=what, compare=compare, **tolerance)


def boolean_twins(call: Callable[[], Any], expected: bool, twin_call: Callable[[], Any], *,
                  what: str, twin_what: str) -> None:
    """``call()`` must be ``expected`` and ``twin_call()`` its opposite, both real bools."""
    for fn, want, text in ((call, expected, what), (twin_call, not expected, twin_what)):
        got = fn()
        assert type(got) is bool, (f"{text} returned {got!r} ({type(got).__name__}); "
                                   "expected a Python bool")
        assert got == want, f"{text} returned {got}; expected {want}"


def _storage_bytes(t: torch.Tensor) -> tuple[int, int]:
    """The first and end address of ``t``'s whole storage ((0, 0) when it has no bytes)."""
    storage = t.untyped_storage()
    return (storage.data_ptr(), storage.data_ptr() + storage.nbytes()) if storage.nbytes() else (0, 0)


def _shares_memory(got: torch.Tensor, x: torch.Tensor) -> bool:
    """Whether ``got``'s storage and ``x``'s overlap: the same storage (a view of ``x``,
    wherever in it), or another storage object over the same memory (``torch.from_numpy``
    of ``x.numpy()[1:]``), which a sandboxed worker cannot tell apart from a view."""
    (lo, hi), (x_lo, x_hi) = _storage_bytes(got), _storage_bytes(x)
    return bool(lo and x_lo and got.device == x.device and lo < x_hi and x_lo < hi)


def assert_no_shared_memory(got: Any, *inputs: Any, what: str) -> None:
    """``got`` is no input object and shares no storage with an input tensor (a view, a
    ``reshape`` that could view, the caller's tensor returned for a trivial case).

    A result with no elements never counts as shared (nothing can change through it),
    nor does an input without storage bytes. Non-tensor inputs are compared by identity
    only.
    """
    for i, x in enumerate(inputs):
        assert got is not x, (f"{what}: the result is the argument itself (argument {i}); "
                              "return a new tensor, the caller may change theirs later")
        if isinstance(got, torch.Tensor) and isinstance(x, torch.Tensor) and got.numel():
            assert not _shares_memory(got, x), (
                f"{what}: the result shares memory with an argument (argument {i}): a view "
                "of it, or the argument itself. Return a new tensor (clone) so that changing "
                "one never changes the other")


def assert_arguments_unchanged(impl: Any, *, what: str) -> None:
    """The last call changed nothing of its arguments that its spec does not let it
    (observed where it ran; the grader has undone it already)."""
    changed = list(impl.mutations)
    assert not changed, (f"{what}: the call {'; '.join(changed)}; leave the arguments as they "
                         "were given (work on a copy: x.clone(), not an in-place change of x)")
