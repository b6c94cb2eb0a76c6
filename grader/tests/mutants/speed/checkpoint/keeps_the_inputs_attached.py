"""Mistake: saves the inputs as they came, still requiring grad (and so still attached
to whatever graph made them)."""

from __future__ import annotations

import torch
from torch import nn

CAUGHT_BY = ('test_forward_saves_only_the_inputs_and_the_random_state',)


def _cuda_device(inputs) -> torch.device | None:
    return next((x.device for x in inputs if isinstance(x, torch.Tensor) and x.is_cuda), None)


def checkpoint_forward(fn: nn.Module, *inputs: torch.Tensor) -> tuple[torch.Tensor, dict]:
    saved: dict = {"inputs": list(inputs), "rng_state": torch.get_rng_state()}
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
        return (None, *checkpoint_backward(ctx.fn, ctx.saved, grad_output))


def checkpoint(fn: nn.Module, *inputs: torch.Tensor) -> torch.Tensor:
    return Checkpoint.apply(fn, *inputs)
