"""Mistake: packs the gradients into one flat bucket with `p.grad.view(-1)`: right while every
gradient is contiguous, but a weight stored transposed (column-major) gets a gradient with the
same strides, and `view(-1)` refuses it ("view size is not compatible with input tensor's
size and stride"). `reshape(-1)` or `flatten()` work for any layout."""

from collections.abc import Callable

import torch
import torch.distributed
from torch import nn

CAUGHT_BY = ("test_returned_gradients_equal_the_full_batch_gradient",
             "test_model_gradients_are_averaged_in_place")

AllReduce = Callable[[torch.Tensor], object]


def average_gradients(
    model: nn.Module, world_size: int, all_reduce: AllReduce = torch.distributed.all_reduce,
) -> list[torch.Tensor | None]:
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    if grads:
        bucket = torch.cat([g.view(-1) for g in grads])
        all_reduce(bucket)
        bucket /= world_size
        offset = 0
        for g in grads:
            g.copy_(bucket[offset:offset + g.numel()].view_as(g))
            offset += g.numel()
    return [p.grad for p in model.parameters()]
