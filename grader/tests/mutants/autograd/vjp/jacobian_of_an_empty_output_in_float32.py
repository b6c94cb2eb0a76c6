"""Mistake: the Jacobian of an output with no elements (an empty batch, or no output
features) made with torch.zeros(*out.shape, *x.shape) and no dtype: the default float32,
where f(x) is float64. There are no rows to stack, so the special case is all that runs; the
rows of every other output come from autograd in the right dtype."""

from __future__ import annotations

import torch
from torch import nn

CAUGHT_BY = ('test_jacobian_matches_autograd_functional',)


def vjp(f: nn.Module, x: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    leaf = x.detach().requires_grad_()
    out = f(leaf)
    if v.shape != out.shape:
        raise ValueError(f"v has shape {list(v.shape)}, f(x) has shape {list(out.shape)}")
    (grad,) = torch.autograd.grad(out, leaf, v)
    return out.detach(), grad


def jacobian(f: nn.Module, x: torch.Tensor) -> torch.Tensor:
    leaf = x.detach().requires_grad_()
    out = f(leaf)
    if out.numel() == 0:
        return torch.zeros(*out.shape, *x.shape)
    rows = []
    for i in range(out.numel()):
        unit = torch.zeros(out.numel(), dtype=out.dtype)
        unit[i] = 1
        (row,) = torch.autograd.grad(out, leaf, unit.view(out.shape), retain_graph=True)
        rows.append(row)
    return torch.stack(rows).reshape(*out.shape, *x.shape)
