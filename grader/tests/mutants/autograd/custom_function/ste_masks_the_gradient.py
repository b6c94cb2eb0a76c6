"""Mistake: the straight-through backward masks the gradient outside [min, max] (saving x to do
it): that is clamp's own derivative again."""

from __future__ import annotations

from typing import Any

import torch

CAUGHT_BY = ('test_clamp_ste_clamps_and_passes_the_gradient_through',)


class LogSumExp(torch.autograd.Function):
    """log(sum(exp(x))) along ``dim``, shifted by the max; backward: grad times softmax."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        m = x.amax(dim, keepdim=True)
        out = m + (x - m).exp().sum(dim, keepdim=True).log()
        ctx.save_for_backward(x, out)
        ctx.dim, ctx.keepdim = dim, keepdim
        return out.clone() if keepdim else out.squeeze(dim)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, None, None]:
        if not ctx.needs_input_grad[0]:
            return None, None, None
        x, out = ctx.saved_tensors
        if not ctx.keepdim:
            grad = grad.unsqueeze(ctx.dim)
        return grad * (x - out).exp(), None, None


def logsumexp(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    return LogSumExp.apply(x, dim, keepdim)


class StraightThroughClamp(torch.autograd.Function):
    """Forward: clamp; backward: the gradient passes through unchanged."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, min: float, max: float) -> torch.Tensor:
        ctx.save_for_backward(x)
        ctx.bounds = (min, max)
        return x.clamp(min, max)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, None, None]:
        (x,) = ctx.saved_tensors
        inside = (x >= ctx.bounds[0]) & (x <= ctx.bounds[1])
        return grad * inside, None, None


def clamp_ste(x: torch.Tensor, min: float, max: float) -> torch.Tensor:
    return StraightThroughClamp.apply(x, min, max)
