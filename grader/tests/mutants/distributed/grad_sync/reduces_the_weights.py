"""Mistake: reduces and averages p.data, the weights, instead of p.grad. The weights are the
same on every rank, so they survive; the gradients stay each rank's own."""

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
            all_reduce(param.data)
            param.data.div_(world_size)
    return [param.grad for param in model.parameters()]
