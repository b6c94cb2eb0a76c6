"""Sharding a stream across DataLoader workers and data-parallel ranks.

A map-style dataset is split among workers by its sampler: each worker is handed
indices. An ``IterableDataset`` has no indices: every worker process gets its
own copy of the dataset and calls ``iter()`` on it. Unless ``__iter__`` asks
``torch.utils.data.get_worker_info()`` who it is and skips the items of the
others, every worker streams ALL the data, and with ``num_workers=4`` each
item arrives four times. With several data-parallel ranks the same holds one
level up.

The course's stream splits like this: the ``world_size * num_workers`` readers
of a training run are numbered ``reader = rank * num_workers + worker_id``, and
reader ``r`` reads the items at positions ``r``, ``r + world_size *
num_workers``, ... of the stream (every ``world_size * num_workers``-th item).
With ``num_workers=0`` the rank's main process reads (``get_worker_info()`` is
``None`` there) and counts as one worker, id 0::

    class ShardedStream(IterableDataset):
        def __init__(self, items, rank=0, world_size=1):
            self.items, self.rank, self.world_size = items, rank, world_size

        def __iter__(self):
            info = get_worker_info()
            workers, worker_id = (1, 0) if info is None else (info.num_workers, info.id)
            reader = self.rank * workers + worker_id
            return iter(self.items[reader::self.world_size * workers])

Here you work out, without running a DataLoader, what each worker reads and
what the rank's DataLoader hands to the training loop.
"""


def worker_items(items: list[int], worker_id: int, num_workers: int,
                 rank: int = 0, world_size: int = 1) -> list[int]:
    """The items worker ``worker_id`` of rank ``rank`` reads from ``items``.

    Spec:
        - ``num_workers`` is the DataLoader's (``0``: the main process reads,
          as worker 0 of 1). The reader's number is ``rank * max(num_workers, 1)
          + worker_id``; it reads every ``world_size * max(num_workers, 1)``-th
          item starting at that position, in stream order.
        - Return a new ``list`` (never the caller's ``items``). Some readers may
          get one item fewer than others, or none at all: the last shards are
          uneven when the stream's length does not divide evenly.
        - ``ValueError`` if ``num_workers < 0``, ``worker_id`` is not in
          ``[0, max(num_workers, 1))``, ``world_size < 1``, or ``rank`` is not
          in ``[0, world_size)``.

    Example (10 items, 2 ranks of 2 workers: 4 readers):
        >>> worker_items(list(range(10, 20)), 1, 2)            # one rank: 2 readers
        [11, 13, 15, 17, 19]
        >>> worker_items(list(range(10, 20)), 1, 2, rank=1, world_size=2)   # reader 3
        [13, 17]
    """
    raise NotImplementedError


def loader_batches(items: list[int], num_workers: int, batch_size: int, rank: int = 0,
                   world_size: int = 1, drop_last: bool = False) -> list[list[int]]:
    """The batches rank ``rank``'s ``DataLoader(ShardedStream(items, rank, world_size),
    batch_size=batch_size, num_workers=num_workers, drop_last=drop_last)`` yields, in order.

    Spec:
        - Each worker batches ITS OWN items: it cuts its shard (``worker_items``)
          into consecutive batches of ``batch_size``; its last batch is short if
          its shard does not divide evenly, and is dropped with ``drop_last``.
          So one epoch can hold a short batch from every worker, not one at the
          end.
        - The DataLoader takes the workers' batches in turn: the first batch of
          worker 0, of worker 1, ..., then every worker's second batch, and so
          on; a worker that has run out is skipped.
        - Each batch is a ``list`` of the items (Python ints), in the worker's
          order; the result is the list of batches.
        - ``ValueError`` as in ``worker_items``, and if ``batch_size < 1``.

    Example (items 0..9, one rank, 3 workers, batches of 2):
        >>> loader_batches(list(range(10)), 3, 2)
        [[0, 3], [1, 4], [2, 5], [6, 9], [7], [8]]

        Worker 0 reads 0, 3, 6, 9, worker 1 reads 1, 4, 7 and worker 2 reads
        2, 5, 8. With ``drop_last=True`` the short batches [7] and [8] go.

    Pitfall: with an ``IterableDataset``, ``drop_last``
    and the batch size act per worker, and ``len(loader)`` (taken from the
    dataset's ``__len__`` if it has one) is no longer the number of batches.
    """
    raise NotImplementedError
