"""Mistake: shards by worker only; rank r's worker w reads what rank 0's worker w
reads, so every rank trains on the same items."""

from __future__ import annotations

CAUGHT_BY = ('test_every_item_is_read_exactly_once_per_epoch',)


def _check(worker_id: int, num_workers: int, rank: int, world_size: int) -> int:
    if num_workers < 0:
        raise ValueError(f"num_workers must be non-negative, got {num_workers}")
    workers = max(num_workers, 1)
    if not 0 <= worker_id < workers:
        raise ValueError(f"worker_id must be in [0, {workers}), got {worker_id}")
    if world_size < 1:
        raise ValueError(f"world_size must be at least 1, got {world_size}")
    if not 0 <= rank < world_size:
        raise ValueError(f"rank must be in [0, {world_size}), got {rank}")
    return workers


def worker_items(items: list[int], worker_id: int, num_workers: int,
                 rank: int = 0, world_size: int = 1) -> list[int]:
    workers = _check(worker_id, num_workers, rank, world_size)
    return list(items[worker_id::workers])
