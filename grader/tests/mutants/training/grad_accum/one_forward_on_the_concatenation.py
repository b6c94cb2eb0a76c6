"""Mistake: concatenates the micro-batches and runs one forward/backward: the gradients are
right, but it needs the memory of the whole batch, which accumulation exists to avoid."""

import torch
import torch.nn.functional as F
from torch import nn

CAUGHT_BY = (
    "test_one_forward_per_micro_batch",
)

MicroBatch = tuple[torch.Tensor, torch.Tensor]  # (inputs, targets)


def accumulated_gradients(
    model: nn.Module, loss_name: str, micro_batches: list[MicroBatch],
) -> list[torch.Tensor | None]:
    """Zero the gradients, then one backward on the whole concatenated batch."""
    if not micro_batches:
        raise ValueError("no micro-batch to accumulate")
    loss_fn = getattr(F, loss_name)
    model.zero_grad()
    inputs = torch.cat([x for x, _ in micro_batches])
    targets = torch.cat([y for _, y in micro_batches])
    loss_fn(model(inputs), targets).backward()
    return [param.grad for param in model.parameters()]
