"""Assertions for property tests: exact types, dtypes, shapes, then values.

``assert_same`` is the one comparison every test uses. It refuses a tensor
subclass or a look-alike object before looking at values (``torch.equal`` would
accept a float one-hot for a long one), compares values as
``torch.testing.assert_close`` does (dtype-aware default tolerances), and on mismatch
raises ``Mismatch`` carrying got/expected descriptions and a diff summary for the
report.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

from grader.contract.describe import describe
from grader.core import differences, engine_phrases
from grader.core.i18n import Message
from grader.core.outcomes import StudentError, worded


class Mismatch(AssertionError):
    """A wrong answer, with the data a report needs to explain it."""

    def __init__(self, message: str | Message, *, got: Any = None, expected: Any = None,
                 diff: dict[str, Any] | None = None):
        self.worded = message if isinstance(message, Message) else None
        super().__init__(str(message))
        self.details = {
            "got": describe(got),
            "expected": describe(expected),
            "diff": diff or {},
        }


def assert_same(got: Any, expected: Any, *, what: str = "result",
                rtol: float | None = None, atol: float | None = None,
                equal_nan: bool = False) -> None:
    """Assert ``got`` equals ``expected``: same Python type, tensors exactly
    ``torch.Tensor`` with equal dtype, shape, device and values (within the
    dtype's default tolerance unless ``rtol``/``atol`` are given)."""
    _compare(got, expected, what, rtol, atol, equal_nan)


def assert_same_dtype(got: Any, expected: torch.Tensor, *, what: str = "result") -> None:
    """Only the form of ``got``: exactly a ``torch.Tensor`` of ``expected``'s dtype (a form
    check), worded as ``assert_same`` words the same difference, so that a report counts
    it with the comparisons that show it."""
    if type(got) is not torch.Tensor or got.dtype != expected.dtype:
        _compare_tensor(got, expected, what, None, None, False)


def stopped(failure: AssertionError) -> AssertionError:
    """``failure``, the comparison of an answer on an ordinary input that rides with a
    property, as that property's failure: "stopped by another defect: ..." (the answer
    is wrong where another property looks), with the same got, expected and diff."""
    said = differences.stopped(worded(failure) or str(failure).strip() or "assertion failed")
    if isinstance(failure, Mismatch):
        kept = Mismatch(said)
        kept.details = failure.details
        return kept
    return _worded(said)


def as_tuple(x: tuple[Any, ...]) -> tuple[Any, ...]:
    """The items ``x`` holds, as an exact ``tuple``, whatever tuple subclass it is
    (``torch.Size``, a named tuple): read from its storage, not through methods it
    may override."""
    return tuple.__getitem__(x, slice(None))


def is_tuple_of_ints(x: Any) -> bool:
    """Whether ``x`` is what a spec calls "a tuple of Python ints": a tuple, or a
    subclass of one (``torch.Size``), holding exact ``int``s (not bools, not tensors)."""
    return isinstance(x, tuple) and all(type(n) is int for n in as_tuple(x))


def _compare(got: Any, expected: Any, what: str, rtol: float | None, atol: float | None,
             equal_nan: bool) -> None:
    if isinstance(expected, torch.Tensor):
        _compare_tensor(got, expected, what, rtol, atol, equal_nan)
        return
    if isinstance(got, tuple) and isinstance(expected, tuple):
        # A spec's "tuple" is any tuple: torch.Size, what torch itself returns for a shape,
        # is one. The items compared are those the tuple holds (``tuple.__getitem__``
        # reads them past any ``__iter__``/``__len__``/``__eq__`` a subclass defines).
        got, expected = as_tuple(got), as_tuple(expected)
    if type(got) is not type(expected):
        raise Mismatch(
            Message("{what}: expected a {expected}, got a {got}",
                    {"what": what, "expected": type(expected).__name__, "got": type(got).__name__}),
            got=got, expected=expected, diff={"kind": "type"})
    if isinstance(expected, (tuple, list)):
        if len(got) != len(expected):
            counts = {"what": what, "expected": len(expected), "got": len(got)}
            raise Mismatch(Message("{what}: expected {expected} item, got {got}", counts) if len(expected) == 1
                           else Message("{what}: expected {expected} items, got {got}", counts),
                           got=got, expected=expected, diff={"kind": "length"})
        for i, (g, e) in enumerate(zip(got, expected)):
            _compare(g, e, f"{what}[{i}]", rtol, atol, equal_nan)
        return
    if isinstance(expected, float):
        t_got, t_exp = torch.tensor(got, dtype=torch.float64), torch.tensor(expected, dtype=torch.float64)
        _compare_tensor(t_got, t_exp, what, rtol, atol, equal_nan, shown=(got, expected))
        return
    if got != expected:
        raise Mismatch(Message("{what}: expected {expected}, got {got}",
                               {"what": what, "expected": repr(expected), "got": repr(got)}),
                       got=got, expected=expected, diff={"kind": "value"})


def _compare_tensor(got: Any, expected: torch.Tensor, what: str, rtol: float | None, atol: float | None,
                    equal_nan: bool, shown: tuple[Any, Any] | None = None) -> None:
    shown_got, shown_exp = shown if shown else (got, expected)
    if type(got) is not torch.Tensor:
        raise Mismatch(Message("{what}: expected a torch.Tensor, got {got}", {"what": what, "got": type(got).__name__}),
                       got=got, expected=expected, diff={"kind": "type"})
    if got.dtype != expected.dtype:
        raise Mismatch(Message("{what}: dtype differs: got {got}, expected {expected}",
                               {"what": what, "got": str(got.dtype), "expected": str(expected.dtype)}),
                       got=got, expected=expected, diff={"kind": "dtype"})
    if got.shape != expected.shape:
        raise Mismatch(
            Message("{what}: shape differs: got {got}, expected {expected}",
                    {"what": what, "got": str(tuple(got.shape)), "expected": str(tuple(expected.shape))}),
            got=got, expected=expected, diff={"kind": "shape"})
    if got.device.type != expected.device.type:
        raise Mismatch(Message("{what}: device differs: got {got}, expected {expected}",
                               {"what": what, "got": str(got.device), "expected": str(expected.device)}),
                       got=got, expected=expected, diff={"kind": "device"})
    # Not torch.testing.assert_close: its first call imports torch.distributed.tensor
    # (a large share of a quick ``torchdrill check``) only to rule out DTensors.
    # The test is the same: its default tolerance table and torch.isclose.
    if not bool(_close(got, expected, rtol, atol, equal_nan).all()):
        diff = value_diff(got, expected, rtol, atol, equal_nan)
        close = expected.is_floating_point() or expected.is_complex()
        said = {"what": what, "summary": diff["summary"]}
        raise Mismatch(Message("{what}: Tensor-likes are not close! {summary}", said) if close
                       else Message("{what}: Tensor-likes are not equal! {summary}", said),
                       got=shown_got, expected=shown_exp, diff=diff)


def _close(got: torch.Tensor, expected: torch.Tensor, rtol: float | None = None, atol: float | None = None,
           equal_nan: bool = False) -> torch.Tensor:
    """Elementwise closeness as ``torch.testing.assert_close`` decides it: exact for
    integer and bool dtypes, dtype-aware default tolerances for floating ones."""
    g, e = got.detach().cpu(), expected.detach().cpu()
    if not (g.is_floating_point() or g.is_complex()):
        return g == e
    default_rtol, default_atol = torch.testing._comparison.default_tolerances(g, e)
    return torch.isclose(g, e, rtol=default_rtol if rtol is None else rtol,
                         atol=default_atol if atol is None else atol, equal_nan=equal_nan)


def value_diff(got: torch.Tensor, expected: torch.Tensor, rtol: float | None = None, atol: float | None = None,
               equal_nan: bool = False, max_indices: int = 5) -> dict[str, Any]:
    """Where two same-shape tensors differ: count, max errors, first indices."""
    g, e = got.detach().cpu(), expected.detach().cpu()
    close = _close(g, e, rtol, atol, equal_nan)
    g64, e64 = g.double(), e.double()
    bad = (~close).nonzero().tolist()
    abs_err = (g64 - e64).abs()
    finite = torch.isfinite(abs_err)
    max_abs = abs_err[finite].max().item() if finite.any() else float("nan")
    rel = abs_err / e64.abs().clamp_min(1e-300)
    max_rel = rel[finite].max().item() if finite.any() else float("nan")
    n = len(bad)
    summary = engine_phrases.VALUES_SUMMARY.format(mismatched=n, total=g.numel(),
                                                   index=tuple(bad[0]) if bad else ())
    return {
        "kind": "values",
        "mismatched": n,
        "total": g.numel(),
        # inf or nan where a finite value was expected: what an overflow or 0 * inf leaves
        "nonfinite": int((~torch.isfinite(g) & torch.isfinite(e)).sum()) if g.is_floating_point() else 0,
        "max_abs_error": max_abs if max_abs == max_abs else None,
        "max_rel_error": max_rel if max_rel == max_rel else None,
        "first_indices": [list(i) for i in bad[:max_indices]],
        "summary": summary,
    }


@contextmanager
def expect_raises(exc_type: type[BaseException], *, when: str) -> Iterator[None]:
    """The student's call inside must raise ``exc_type`` (``when`` says why).

    ``with expect_raises(ValueError, when="a label is negative"): impl.one_hot(x)``
    """
    try:
        yield
    except StudentError as err:
        if isinstance(err.original, exc_type):
            return
        raise _worded(Message(engine_phrases.RAISED_OTHER,
                              {"expected": exc_type.__name__, "when": when, "function": err.function,
                               "kind": type(err.original).__name__, "error": str(err.original)})) from None
    raise _worded(Message(engine_phrases.RETURNED_NORMALLY,
                          {"expected": exc_type.__name__, "when": when}))


def _worded(message: Message) -> AssertionError:
    """A failed check whose message is kept as an id (``grader.core.outcomes.worded``)."""
    failure = AssertionError(str(message))
    failure.worded = message  # type: ignore[attr-defined]
    return failure
