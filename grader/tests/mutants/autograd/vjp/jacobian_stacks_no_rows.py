"""Mistake: the rows of the Jacobian stacked with no case for an output with no elements:
torch.stack of an empty list raises "stack expects a non-empty TensorList" where the answer is
an empty tensor of shape (*f(x).shape, *x.shape).

Seen in real code: redfish64/mem1win, learn_jac_hess_ex.py (one torch.autograd.grad per row
of torch.eye, then torch.stack of the rows), and torch.autograd.functional.jacobian itself
fails the same way."""

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
    basis = torch.eye(out.numel(), dtype=out.dtype)
    rows = [torch.autograd.grad(out, leaf, e.view(out.shape), retain_graph=True)[0] for e in basis]
    return torch.stack(rows).reshape(*out.shape, *x.shape)
