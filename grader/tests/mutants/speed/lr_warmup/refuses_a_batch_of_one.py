"""Mistake: an off-by-one in the argument check refuses batch_size == 1 (``<= 1`` for
``< 1``), although a batch of one sample is valid: the spec's ValueError starts at 0."""

from __future__ import annotations

import torch

CAUGHT_BY = ('test_the_edges_of_the_valid_arguments_are_accepted',)


def warmup_lr_trace(base_lrs: list[float], batch_size: int, total_steps: int,
                    base_batch_size: int = 256, warmup_steps: int = 5,
                    start_factor: float = 0.1) -> list[list[float]]:
    """Scale every group's lr by batch_size / base_batch_size, warm up linearly from
    start_factor, and record each group's lr before each optimizer step."""
    if batch_size <= 1 or base_batch_size < 1:
        raise ValueError(f"batch sizes must be at least 1, got {batch_size} and {base_batch_size}")
    if warmup_steps < 0 or total_steps < 0:
        raise ValueError(f"step counts must be non-negative, got {warmup_steps} and {total_steps}")
    if not 0 < start_factor <= 1:
        raise ValueError(f"start_factor must be in (0, 1], got {start_factor}")
    scale = batch_size / base_batch_size
    groups = [{"params": [torch.zeros(1, requires_grad=True)], "lr": lr * scale} for lr in base_lrs]
    optimizer = torch.optim.SGD(groups, lr=1.0)

    def factor(step: int) -> float:
        if warmup_steps == 0:
            return 1.0
        return start_factor + (1 - start_factor) * min(step, warmup_steps) / warmup_steps

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
    trace = []
    for _ in range(total_steps):
        trace.append([float(group["lr"]) for group in optimizer.param_groups])
        optimizer.step()
        scheduler.step()
    return trace
