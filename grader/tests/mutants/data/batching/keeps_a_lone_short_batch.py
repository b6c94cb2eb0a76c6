"""Mistake: drop_last drops the short last batch only when other batches come before it,
so an order shorter than batch_size still gives one batch ([[...]]) instead of none."""

from __future__ import annotations

CAUGHT_BY = ('test_batch_indices_match_batch_sampler',)


def batch_indices(order: list[int], batch_size: int, drop_last: bool = False) -> list[list[int]]:
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    batches = [list(order[i:i + batch_size]) for i in range(0, len(order), batch_size)]
    if drop_last and len(batches) > 1 and len(batches[-1]) < batch_size:
        batches.pop()
    return batches
