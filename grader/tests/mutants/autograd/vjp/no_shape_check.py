"""Mistake: v's shape is never checked: a v that broadcasts against f(x) gives a product anyway,
and one that does not gives autograd's RuntimeError, not ValueError."""

from __future__ import annotations

import torch
from torch import nn

CAUGHT_BY = ('test_v_of_the_wrong_shape_raises_value_error',)


def vjp(f: nn.Module, x: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(f(x), v^T J)`` from one backward pass w.r.t. a detached copy of x only."""
    leaf = x.detach().requires_grad_()
    out = f(leaf)
    (grad,) = torch.autograd.grad(out, leaf, v)
    return out.detach(), grad


def jacobian(f: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """One vector-Jacobian product per output element, with unit vectors: the rows of J."""
    leaf = x.detach().requires_grad_()
    out = f(leaf)
    rows = []
    for i in range(out.numel()):
        unit = torch.zeros(out.numel(), dtype=out.dtype, device=out.device)
        unit[i] = 1
        (row,) = torch.autograd.grad(out, leaf, unit.view(out.shape), retain_graph=True)
        rows.append(row)
    if not rows:
        return torch.zeros(*out.shape, *x.shape, dtype=out.dtype, device=out.device)
    return torch.stack(rows).reshape(*out.shape, *x.shape)
