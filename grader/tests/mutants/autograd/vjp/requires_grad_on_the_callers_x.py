"""Mistake: x.requires_grad_() on the caller's tensor instead of a detached copy: the answers are
right, the caller's x now requires grad (and a later backward of theirs fills x.grad)."""

from __future__ import annotations

import torch
from torch import nn

CAUGHT_BY = ('test_f_and_x_are_left_alone',)


def vjp(f: nn.Module, x: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(f(x), v^T J)`` from one backward pass w.r.t. a detached copy of x only."""
    leaf = x.requires_grad_()
    out = f(leaf)
    if v.shape != out.shape:
        raise ValueError(f"v has shape {list(v.shape)}, f(x) has shape {list(out.shape)}")
    (grad,) = torch.autograd.grad(out, leaf, v)
    return out.detach(), grad


def jacobian(f: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """One vector-Jacobian product per output element, with unit vectors: the rows of J."""
    leaf = x.requires_grad_()
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
