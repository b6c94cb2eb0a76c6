"""Mistake: saves exp(x) for backward and returns grad * e / e.sum(): the forward is stable, the
backward overflows (inf / inf = NaN) where x is large."""

from __future__ import annotations

from typing import Any

import torch

CAUGHT_BY = ('test_large_inputs_stay_finite',)


class LogSumExp(torch.autograd.Function):
    """log(sum(exp(x))) along ``dim``, shifted by the max; backward: grad times softmax."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        m = x.amax(dim, keepdim=True)
        out = m + (x - m).exp().sum(dim, keepdim=True).log()
        e = x.exp()
        ctx.save_for_backward(e, e.sum(dim, keepdim=True))
        ctx.dim, ctx.keepdim = dim, keepdim
        return out.clone() if keepdim else out.squeeze(dim)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, None, None]:
        if not ctx.needs_input_grad[0]:
            return None, None, None
        e, total = ctx.saved_tensors
        if not ctx.keepdim:
            grad = grad.unsqueeze(ctx.dim)
        return grad * e / total, None, None


def logsumexp(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    return LogSumExp.apply(x, dim, keepdim)


class StraightThroughClamp(torch.autograd.Function):
    """Forward: clamp; backward: the gradient passes through unchanged."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, min: float, max: float) -> torch.Tensor:
        return x.clamp(min, max)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, None, None]:
        return (grad if ctx.needs_input_grad[0] else None), None, None


def clamp_ste(x: torch.Tensor, min: float, max: float) -> torch.Tensor:
    return StraightThroughClamp.apply(x, min, max)
