"""Describe arguments and results as JSON-ready data for counterexamples.

A tensor becomes ``{"type": "tensor", "shape", "dtype", "stride", "values"}`` with
long tensors elided (first and last few values per dimension, at most
``MAX_SHOWN`` values in all, whatever the number of dimensions), so a report can
show exactly what the student's function was given without storing megabytes, and
describing a hostile answer (a 16-dim stride-0 view) costs the grader no more than
describing a small one.
"""

from __future__ import annotations

import math
from typing import Any

import torch

MAX_ELEMENTS = 64  # tensors with more elements are elided
EDGE = 3  # values kept at each end of an elided dimension
MAX_SHOWN = (2 * EDGE) ** 4  # values of an elided tensor shown at most (all of them up to 4-D)
MAX_ITEMS = 16  # list/tuple/dict items shown
MAX_TEXT = 300


def describe(value: Any, depth: int = 0) -> Any:
    """A JSON-serialisable description of ``value`` (never the object itself)."""
    if isinstance(value, torch.Tensor):
        return describe_tensor(value)
    if value is None or isinstance(value, (bool, int, str)):
        return value if not isinstance(value, str) else _short(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if depth > 4:
        return {"type": type(value).__name__, "repr": "..."}
    if isinstance(value, (list, tuple)):
        items = [describe(v, depth + 1) for v in value[:MAX_ITEMS]]
        out: dict[str, Any] = {"type": type(value).__name__, "items": items}
        if len(value) > MAX_ITEMS:
            out["omitted"] = len(value) - MAX_ITEMS
        return out
    if isinstance(value, dict):
        keys = list(value)[:MAX_ITEMS]
        return {"type": "dict", "items": {str(k): describe(value[k], depth + 1) for k in keys}}
    if isinstance(value, torch.nn.Module):
        params = {n: list(p.shape) for n, p in value.named_parameters()}
        return {"type": "module", "repr": _short(repr(value)), "parameters": params}
    if isinstance(value, torch.dtype):
        return str(value)
    if callable(value) and hasattr(value, "__qualname__"):  # no memory address: stay stable
        return {"type": "function", "repr": value.__qualname__}
    return {"type": type(value).__name__, "repr": _short(repr(value))}


def describe_tensor(t: torch.Tensor) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "tensor",
        "shape": list(t.shape),
        "dtype": str(t.dtype).removeprefix("torch."),
        "stride": list(t.stride()) if t.layout == torch.strided else None,
        "device": str(t.device),
    }
    if t.requires_grad:
        out["requires_grad"] = True
    data = t.detach().cpu()
    if data.is_complex() or data.layout != torch.strided:
        out["values"] = _short(repr(data))
        return out
    out["values"] = _elided_values(data)
    out["elided"] = data.numel() > MAX_ELEMENTS
    return out


def _elided_values(t: torch.Tensor) -> Any:
    if t.dim() == 0:
        return _scalar(t.item())
    if t.numel() <= MAX_ELEMENTS:
        return _nested(t)
    return _nested_elided(t)


def _nested(t: torch.Tensor) -> Any:
    if t.dim() == 0:
        return _scalar(t.item())
    return [_nested(row) for row in t]


def _nested_elided(t: torch.Tensor, budget: list[int] | None = None) -> Any:
    """The first and last ``EDGE`` rows of every dimension, until ``MAX_SHOWN`` values
    are shown; whatever is left is one ``"..."`` (``budget``: values still to show)."""
    budget = [MAX_SHOWN] if budget is None else budget
    if t.dim() == 0:
        budget[0] -= 1
        return _scalar(t.item())
    n = t.shape[0]
    rows: list[int | None] = list(range(n)) if n <= 2 * EDGE else [
        *range(EDGE), None, *range(n - EDGE, n)]
    out: list[Any] = []
    for i in rows:
        if i is None or budget[0] <= 0:
            out.append("...")
            if i is not None:
                break
            continue
        out.append(_nested_elided(t[i], budget))
    return out


def _scalar(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)  # JSON has no NaN/inf
    return x


def _short(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."
