"""Mistake: reduces and averages clones of the gradients and returns them, leaving each
p.grad as it was (the optimizer would step with the local gradient)."""

from collections.abc import Callable

import torch
import torch.distributed
from torch import nn

CAUGHT_BY = (
    "test_model_gradients_are_averaged_in_place",
)

AllReduce = Callable[[torch.Tensor], object]


def average_gradients(
    model: nn.Module, world_size: int, all_reduce: AllReduce = torch.distributed.all_reduce,
) -> list[torch.Tensor | None]:
    """One all_reduce per parameter with a gradient, then divide in place."""
    averaged = []
    for param in model.parameters():
        if param.grad is None:
            averaged.append(None)
            continue
        grad = param.grad.clone()
        all_reduce(grad)
        averaged.append(grad / world_size)
    return averaged
