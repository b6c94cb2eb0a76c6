"""Mistake: all_reduce sums, and the sum is never divided by world_size: every gradient is
world_size times the full-batch one."""

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
    for param in model.parameters():
        if param.grad is not None:
            all_reduce(param.grad)
    return [param.grad for param in model.parameters()]
