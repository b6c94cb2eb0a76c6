"""Right, written otherwise: each reader's shard is ``itertools.islice`` of the stream (as
webdataset's ``split_by_node`` and ``split_by_worker`` take theirs, here with the spec's
rank-major reader number), and the rounds of batches come from ``itertools.zip_longest``
with the exhausted workers' gaps left out."""

from __future__ import annotations

from functools import partial
from itertools import islice, zip_longest

_GAP = object()


def _workers(num_workers: int, rank: int, world_size: int, worker_id: int = 0) -> int:
    if num_workers < 0 or world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"bad num_workers={num_workers}, rank={rank}, world_size={world_size}")
    workers = num_workers or 1
    if worker_id not in range(workers):
        raise ValueError(f"worker_id {worker_id} is not one of {workers} workers")
    return workers


def worker_items(items: list[int], worker_id: int, num_workers: int,
                 rank: int = 0, world_size: int = 1) -> list[int]:
    workers = _workers(num_workers, rank, world_size, worker_id)
    return list(islice(items, rank * workers + worker_id, None, world_size * workers))


def loader_batches(items: list[int], num_workers: int, batch_size: int, rank: int = 0,
                   world_size: int = 1, drop_last: bool = False) -> list[list[int]]:
    workers = _workers(num_workers, rank, world_size)
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    streams = []
    for w in range(workers):
        it = iter(worker_items(items, w, num_workers, rank, world_size))
        batches = list(iter(partial(_next_batch, it, batch_size), []))
        streams.append([b for b in batches if not (drop_last and len(b) < batch_size)])
    return [b for round_ in zip_longest(*streams, fillvalue=_GAP) for b in round_ if b is not _GAP]


def _next_batch(it, batch_size):
    return list(islice(it, batch_size))
