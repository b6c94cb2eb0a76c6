"""Mistake: the Jacobian's rows read from leaf.grad after repeated backward calls, never cleared:
row i is the sum of rows 0..i."""

from __future__ import annotations

import torch
from torch import nn

CAUGHT_BY = ('test_jacobian_matches_autograd_functional',)


def vjp(f: nn.Module, x: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(f(x), v^T J)`` from one backward pass w.r.t. a detached copy of x only."""
    leaf = x.detach().requires_grad_()
    out = f(leaf)
    if v.shape != out.shape:
        raise ValueError(f"v has shape {list(v.shape)}, f(x) has shape {list(out.shape)}")
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
        out.backward(unit.view(out.shape), retain_graph=True, inputs=[leaf])
        rows.append(leaf.grad.clone())
    if not rows:
        return torch.zeros(*out.shape, *x.shape, dtype=out.dtype, device=out.device)
    return torch.stack(rows).reshape(*out.shape, *x.shape)
