"""Mistake: clears the old gradients with `zero_grad(set_to_none=False)`, which fills every
existing .grad with zeros: the trainable ones then accumulate correctly, but a frozen parameter
that arrived holding a stale gradient ends with zeros instead of None (one backward on the big
batch never gives it a gradient). `model.zero_grad()` (set_to_none=True) discards them all."""

import torch
import torch.nn.functional as F
from torch import nn

CAUGHT_BY = ("test_stale_gradients_are_discarded",)

MicroBatch = tuple[torch.Tensor, torch.Tensor]  # (inputs, targets)


def accumulated_gradients(
    model: nn.Module, loss_name: str, micro_batches: list[MicroBatch],
) -> list[torch.Tensor | None]:
    if not micro_batches:
        raise ValueError("no micro-batch to accumulate")
    loss_fn = getattr(F, loss_name)
    total = sum(inputs.shape[0] for inputs, _ in micro_batches)
    model.zero_grad(set_to_none=False)  # zeros in place, as an old optimizer.zero_grad() did
    for inputs, targets in micro_batches:
        loss = loss_fn(model(inputs), targets)
        (loss * (inputs.shape[0] / total)).backward()
    return [param.grad for param in model.parameters()]
