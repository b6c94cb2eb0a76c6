"""Mistake: reduces every parameter's .grad without checking for None, so a frozen parameter
(requires_grad=False, grad None) reaches all_reduce."""

from collections.abc import Callable

import torch
import torch.distributed
from torch import nn

CAUGHT_BY = (
    "test_frozen_parameters_keep_no_gradient",
    "test_gloo_processes_equal_the_full_batch_gradient",
)

AllReduce = Callable[[torch.Tensor], object]


def average_gradients(
    model: nn.Module, world_size: int, all_reduce: AllReduce = torch.distributed.all_reduce,
) -> list[torch.Tensor | None]:
    """One all_reduce per parameter with a gradient, then divide in place."""
    for param in model.parameters():
        all_reduce(param.grad)
        param.grad.div_(world_size)
    return [param.grad for param in model.parameters()]
