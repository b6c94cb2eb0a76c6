"""Mistake: batch_indices ignores drop_last and always keeps the short last batch."""

from __future__ import annotations

CAUGHT_BY = ('test_batch_indices_match_batch_sampler',)


def _check_batch_size(batch_size: int) -> None:
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")


def batch_indices(order: list[int], batch_size: int, drop_last: bool = False) -> list[list[int]]:
    _check_batch_size(batch_size)
    batches = [list(order[i:i + batch_size]) for i in range(0, len(order), batch_size)]
    return batches
