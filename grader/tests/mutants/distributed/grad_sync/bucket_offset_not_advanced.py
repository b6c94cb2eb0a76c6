"""Mistake: packs every gradient into one flat bucket and reduces it once (good), but copies
the slices back from offset 0 every time, so every parameter gets the first one's values."""

from collections.abc import Callable

import torch
import torch.distributed
from torch import nn

CAUGHT_BY = (
    "test_returned_gradients_equal_the_full_batch_gradient",
    "test_model_gradients_are_averaged_in_place",
    "test_gloo_processes_equal_the_full_batch_gradient",
)

AllReduce = Callable[[torch.Tensor], object]


def average_gradients(
    model: nn.Module, world_size: int, all_reduce: AllReduce = torch.distributed.all_reduce,
) -> list[torch.Tensor | None]:
    """One all_reduce per parameter with a gradient, then divide in place."""
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    if grads:
        bucket = torch.cat([g.reshape(-1) for g in grads])
        all_reduce(bucket)
        bucket /= world_size
        for g in grads:
            g.copy_(bucket[: g.numel()].view_as(g))
    return [param.grad for param in model.parameters()]
