"""Gradients across the trust boundary: outputs computed in a worker, attached in the
grader to its own inputs through one autograd node whose backward asks the worker.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch


class Bridge(torch.autograd.Function):
    """Outputs computed in a worker, differentiable with respect to the grader's inputs."""

    @staticmethod
    def forward(ctx: Any, backward: Callable[[Sequence[torch.Tensor]], list[Any]],
                outputs: tuple[torch.Tensor, ...], *inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
        ctx.remote_backward = backward
        return outputs

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor) -> tuple[Any, ...]:
        return (None, None, *ctx.remote_backward([g.contiguous() for g in grads]))


def gradient_problem(got: Any, inputs: Sequence[torch.Tensor]) -> str:
    """What is wrong with a backward pass's answer ("" when nothing): one gradient, or
    None, per input, of its shape, dtype and device (else autograd raises in the test)."""
    if type(got) is not list or len(got) != len(inputs):
        return "the backward pass answered the wrong number of gradients"
    for g, x in zip(got, inputs):
        if g is not None and not (isinstance(g, torch.Tensor) and g.shape == x.shape
                                  and g.dtype == x.dtype and g.device == x.device):
            return f"a gradient does not match its input (shape {list(x.shape)}, {x.dtype})"
    return ""
