"""Mistake: the autograd.Function keeps the inputs and, in backward, simply runs fn again
with grad enabled, saving and restoring no random state (the two halves are right, but the
Function does not use them): a Dropout in fn draws new masks from the caller's generator in
the recomputation, so the gradients belong to another network than the forward pass's."""

from __future__ import annotations

import torch
from torch import nn

CAUGHT_BY = ('test_checkpoint_with_dropout_recomputes_from_the_saved_random_state',)


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
    """Forward without a graph; backward by a recomputation from whatever random state there is."""

    @staticmethod
    def forward(ctx, fn: nn.Module, *inputs: torch.Tensor) -> torch.Tensor:
        ctx.fn = fn
        ctx.save_for_backward(*inputs)
        with torch.no_grad():
            return fn(*inputs)

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor):
        inputs = [x.detach().requires_grad_(x.is_floating_point()) for x in ctx.saved_tensors]
        with torch.enable_grad():
            output = ctx.fn(*inputs)
        torch.autograd.backward(output, grad_output)
        return (None, *[x.grad if x.requires_grad else None for x in inputs])


def checkpoint(fn: nn.Module, *inputs: torch.Tensor) -> torch.Tensor:
    return Checkpoint.apply(fn, *inputs)
