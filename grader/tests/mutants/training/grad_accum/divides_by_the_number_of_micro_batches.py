"""Mistake: scales each micro-batch's loss by 1 / k (k micro-batches) instead of n_i / N:
right only when every micro-batch has the same size."""

import torch
import torch.nn.functional as F
from torch import nn

CAUGHT_BY = (
    "test_gradients_equal_one_step_on_the_concatenated_batch",
)

MicroBatch = tuple[torch.Tensor, torch.Tensor]  # (inputs, targets)


def accumulated_gradients(
    model: nn.Module, loss_name: str, micro_batches: list[MicroBatch],
) -> list[torch.Tensor | None]:
    """Zero the gradients once, then accumulate loss_i / k per micro-batch."""
    if not micro_batches:
        raise ValueError("no micro-batch to accumulate")
    loss_fn = getattr(F, loss_name)
    model.zero_grad()
    for inputs, targets in micro_batches:
        loss = loss_fn(model(inputs), targets)
        (loss / len(micro_batches)).backward()
    return [param.grad for param in model.parameters()]
