"""Mistake: the Jacobian taken against a flat leaf made with x.detach().view(-1), then f run on
leaf.view(x.shape): right for a contiguous x, but view cannot flatten a transposed or sliced x
("view size is not compatible with input tensor's size and stride"); reshape or flatten copies
where it must."""

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
    flat = x.detach().view(-1).requires_grad_()
    y = f(flat.view(x.shape))
    out = y.reshape(-1)
    jac = out.new_zeros(out.numel(), flat.numel())
    for i in range(out.numel()):
        (jac[i],) = torch.autograd.grad(out[i], flat, retain_graph=True)
    return jac.reshape(*y.shape, *x.shape)
