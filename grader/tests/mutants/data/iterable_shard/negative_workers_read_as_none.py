"""Mistake: no check that num_workers is non-negative: max(num_workers, 1) reads a negative
num_workers as 0 (the main process reads), where DataLoader refuses it with ValueError."""

from __future__ import annotations

CAUGHT_BY = ("test_bad_arguments_raise_value_error",)


def _check(worker_id: int, num_workers: int, rank: int, world_size: int) -> int:
    workers = max(num_workers, 1)  # -1 is read as 0: the main process
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
    return list(items[rank * workers + worker_id::world_size * workers])


def loader_batches(items: list[int], num_workers: int, batch_size: int, rank: int = 0,
                   world_size: int = 1, drop_last: bool = False) -> list[list[int]]:
    workers = _check(0, num_workers, rank, world_size)
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    per_worker = []
    for w in range(workers):
        shard = worker_items(items, w, num_workers, rank, world_size)
        batches = [shard[i:i + batch_size] for i in range(0, len(shard), batch_size)]
        if drop_last and batches and len(batches[-1]) < batch_size:
            batches.pop()
        per_worker.append(batches)
    rounds = max((len(b) for b in per_worker), default=0)
    return [batches[r] for r in range(rounds) for batches in per_worker if r < len(batches)]
