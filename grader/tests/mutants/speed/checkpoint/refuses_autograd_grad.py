"""Mistake: the Function's backward refuses torch.autograd.grad, as torch's reentrant
checkpoint (use_reentrant=True) does: it works with loss.backward() only, and the spec asks
for both (the grader back-propagates with torch.autograd.grad)."""

from __future__ import annotations

import torch
from torch import nn

CAUGHT_BY = ('test_checkpoint_is_differentiable_like_torch_checkpoint',)


def _cuda_device(inputs) -> torch.device | None:
    return next((x.device for x in inputs if isinstance(x, torch.Tensor) and x.is_cuda), None)


def checkpoint_forward(fn: nn.Module, *inputs: torch.Tensor) -> tuple[torch.Tensor, dict]:
    saved: dict = {"inputs": [x.detach() for x in inputs], "rng_state": torch.get_rng_state()}
    device = _cuda_device(inputs)
    if device is not None:
        saved["cuda_rng_state"] = torch.cuda.get_rng_state(device)
    with torch.no_grad():
        output = fn(*inputs)
    return output, saved


def checkpoint_backward(fn: nn.Module, saved: dict, grad_output: torch.Tensor
                        ) -> list[torch.Tensor | None]:
    inputs = [x.detach().requires_grad_(x.is_floating_point()) for x in saved["inputs"]]
    device = _cuda_device(inputs)
    with torch.random.fork_rng(devices=[] if device is None else [device]):
        torch.set_rng_state(saved["rng_state"])
        if device is not None:
            torch.cuda.set_rng_state(saved["cuda_rng_state"], device)
        with torch.enable_grad():
            output = fn(*inputs)
    torch.autograd.backward(output, grad_output)
    return [x.grad if x.requires_grad else None for x in inputs]


class Checkpoint(torch.autograd.Function):
    """Forward without a graph; backward by recomputation."""

    @staticmethod
    def forward(ctx, fn: nn.Module, *inputs: torch.Tensor) -> torch.Tensor:
        output, ctx.saved = checkpoint_forward(fn, *inputs)
        ctx.fn = fn
        return output

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor):
        if not torch.autograd._is_checkpoint_valid():  # reentrant checkpoint's own test
            raise RuntimeError("Checkpointing is not compatible with .grad(); use .backward()")
        return (None, *checkpoint_backward(ctx.fn, ctx.saved, grad_output))


def checkpoint(fn: nn.Module, *inputs: torch.Tensor) -> torch.Tensor:
    return Checkpoint.apply(fn, *inputs)
