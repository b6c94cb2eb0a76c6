"""Mistake: v^T J as a contraction of v with the whole Jacobian (torch.tensordot), not one
backward pass with v. The values agree, but v is taken in its own dtype: v in float32 against a
float64 Jacobian raises (autograd.grad and backward(v) take v in any floating dtype and give the
product in x's)."""

from __future__ import annotations

import torch
from torch import nn

CAUGHT_BY = ('test_vjp_matches_autograd_functional',)


def vjp(f: nn.Module, x: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    with torch.no_grad():
        out = f(x)
    if v.shape != out.shape:
        raise ValueError(f"v has shape {list(v.shape)}, f(x) has shape {list(out.shape)}")
    return out, torch.tensordot(v, jacobian(f, x), dims=v.dim())


def jacobian(f: nn.Module, x: torch.Tensor) -> torch.Tensor:
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
