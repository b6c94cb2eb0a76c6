"""Mistake: cuts the order with torch.split, so each batch is an int64 tensor, not
a list of Python ints."""

from __future__ import annotations

import torch

CAUGHT_BY = ('test_batch_indices_are_new_lists_of_python_ints',)

Sample = dict[str, "torch.Tensor | int | float | str"]


def _check_batch_size(batch_size: int) -> None:
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")


def batch_indices(order: list[int], batch_size: int, drop_last: bool = False) -> list[list[int]]:
    _check_batch_size(batch_size)
    batches = list(torch.split(torch.tensor(order, dtype=torch.int64), batch_size))
    if drop_last and batches and len(batches[-1]) < batch_size:
        batches.pop()
    return batches
