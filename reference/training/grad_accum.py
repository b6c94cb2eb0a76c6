"""Reference solution: backward of each micro-batch's loss scaled by n_i / N."""

import torch
import torch.nn.functional as F
from torch import nn

MicroBatch = tuple[torch.Tensor, torch.Tensor]  # (inputs, targets)


def accumulated_gradients(
    model: nn.Module, loss_name: str, micro_batches: list[MicroBatch],
) -> list[torch.Tensor | None]:
    """Set every .grad to None once (frozen parameters' too), then accumulate
    (n_i / N) * loss_i per micro-batch."""
    if not micro_batches:
        raise ValueError("no micro-batch to accumulate")
    loss_fn = getattr(F, loss_name)
    total = sum(inputs.shape[0] for inputs, _ in micro_batches)
    model.zero_grad()
    for inputs, targets in micro_batches:
        loss = loss_fn(model(inputs), targets)
        (loss * (inputs.shape[0] / total)).backward()
    return [param.grad for param in model.parameters()]
