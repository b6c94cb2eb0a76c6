"""Mistake: numbers the readers as webdataset does, splitting the stream by node first and
each node's share by worker then: reader worker_id * world_size + rank, not the spec's
rank * num_workers + worker_id. Every item is still read exactly once (a partition, as
test_every_item_is_read_exactly_once_per_epoch and the error cases must accept), but with
several ranks and several workers each reader gets another reader's items.

Provenance: webdataset/webdataset, webdataset/shardlists.py (commit 059bf6e8c0d7ae7b4c30acf0ab08890a9496c01c):
``split_by_node`` keeps ``islice(src, rank, None, world_size)`` when world_size > 1, and
``split_by_worker`` keeps ``islice(src, worker, None, num_workers)`` when num_workers > 1;
a pipeline applies them in that order. Rewritten here over a list (no code copied).
"""

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


def _every(stream: list[int], start: int, step: int) -> list[int]:
    """The items at start, start + step, ... (one stage of the pipeline; step 1 keeps all)."""
    return [item for position, item in enumerate(stream) if position % step == start] if step > 1 else list(stream)


def worker_items(items: list[int], worker_id: int, num_workers: int,
                 rank: int = 0, world_size: int = 1) -> list[int]:
    workers = _check(worker_id, num_workers, rank, world_size)
    node_share = _every(list(items), rank, world_size)  # split by node
    return _every(node_share, worker_id, workers)  # then by worker


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
