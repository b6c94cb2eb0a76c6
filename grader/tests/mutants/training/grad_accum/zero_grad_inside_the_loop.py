"""Mistake: clears the gradients before every micro-batch's backward, so only the last
micro-batch's (scaled) gradient survives."""

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
    """Accumulate (n_i / N) * loss_i per micro-batch, zeroing before each."""
    if not micro_batches:
        raise ValueError("no micro-batch to accumulate")
    loss_fn = getattr(F, loss_name)
    total = sum(inputs.shape[0] for inputs, _ in micro_batches)
    for inputs, targets in micro_batches:
        model.zero_grad()
        loss = loss_fn(model(inputs), targets)
        (loss * (inputs.shape[0] / total)).backward()
    return [param.grad for param in model.parameters()]
