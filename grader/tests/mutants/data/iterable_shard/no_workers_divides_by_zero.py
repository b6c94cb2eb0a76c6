"""Mistake: takes num_workers as the number of readers per rank even when it is 0
(the main process reads): max(num_workers, 1) forgotten."""

from __future__ import annotations

CAUGHT_BY = ('test_worker_items_are_what_each_worker_reads',)


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
    _check(worker_id, num_workers, rank, world_size)
    return list(items[rank * num_workers + worker_id::world_size * num_workers])
