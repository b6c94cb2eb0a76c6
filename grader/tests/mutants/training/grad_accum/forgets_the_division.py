"""Mistake: back-propagates each micro-batch's mean loss unscaled, so the gradients add up
to the sum of the micro-batch gradients (k times too big with k equal micro-batches)."""

import torch
import torch.nn.functional as F
from torch import nn

CAUGHT_BY = (
    "test_gradients_equal_one_step_on_the_concatenated_batch",
    "test_returns_the_gradients",
    "test_stale_gradients_are_discarded",
)

MicroBatch = tuple[torch.Tensor, torch.Tensor]  # (inputs, targets)


def accumulated_gradients(
    model: nn.Module, loss_name: str, micro_batches: list[MicroBatch],
) -> list[torch.Tensor | None]:
    """Zero the gradients once, then back-propagate every micro-batch loss as it is."""
    if not micro_batches:
        raise ValueError("no micro-batch to accumulate")
    loss_fn = getattr(F, loss_name)
    model.zero_grad()
    for inputs, targets in micro_batches:
        loss = loss_fn(model(inputs), targets)
        loss.backward()
    return [param.grad for param in model.parameters()]
