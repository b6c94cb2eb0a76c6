"""Sharding a dataset across data-parallel ranks and DataLoader workers.

In data-parallel training every rank must see a different part of the dataset,
every rank must take the same number of steps per epoch (a rank that runs out
early leaves the others waiting in a collective forever), and the order must be
reshuffled each epoch yet identical on every rank, so that the ranks agree on
who gets what without talking to each other.

``torch.utils.data.DistributedSampler`` does this; here you rebuild it as a
pure function, then split one rank's indices among its DataLoader workers.
"""

import torch


def distributed_indices(dataset_len: int, num_replicas: int, rank: int, *,
                        shuffle: bool = True, seed: int = 0, epoch: int = 0,
                        drop_last: bool = False) -> list[int]:
    """The dataset indices rank ``rank`` of ``num_replicas`` visits in epoch ``epoch``.

    Spec:
        - Return exactly the list that
          ``DistributedSampler(range(dataset_len), num_replicas, rank, shuffle=shuffle,
          seed=seed, drop_last=drop_last)`` yields after ``set_epoch(epoch)``, as a
          ``list`` of Python ``int``.
        - The order: with ``shuffle``, ``torch.randperm(dataset_len, generator=g)``
          where ``g = torch.Generator()`` seeded with ``seed + epoch`` (the same on
          every rank, new each epoch); without it, ``0, 1, ..., dataset_len - 1``.
        - Every rank gets the same number of indices, ``num_samples``:
            * ``drop_last=False``: ``ceil(dataset_len / num_replicas)``. Pad the
              order to ``num_samples * num_replicas`` by repeating it from its
              start (as many times as needed: 2 indices over 5 ranks become
              ``a b a b a``). Some indices are then seen twice.
            * ``drop_last=True``: ``dataset_len // num_replicas``. Cut the tail
              of the order off. Some indices are then not seen at all.
        - Rank ``r`` takes every ``num_replicas``-th index of that padded (or
          cut) order, starting at position ``r``: strided, not a contiguous block.
        - Raise ``ValueError`` if ``num_replicas < 1``, if ``rank`` is not in
          ``[0, num_replicas)``, or if ``dataset_len < 0``.

    Example (no shuffle, so the order is 0..4):
        >>> distributed_indices(5, 2, 0, shuffle=False)
        [0, 2, 4]
        >>> distributed_indices(5, 2, 1, shuffle=False)    # padded with index 0
        [1, 3, 0]
        >>> distributed_indices(5, 2, 1, shuffle=False, drop_last=True)
        [1, 3]

    Pitfall the notes warn about:
        - Seeding with ``seed`` alone gives the same order every epoch: the
          generator's seed is ``seed + epoch``.

    A mistake the notes' own code makes:
        - The notes' sketch of the sampler shuffles with ``random.Random(self.epoch)``:
          seeded by the epoch alone, so every run shuffles alike whatever its
          ``seed``, and by Python's generator, not ``torch.randperm``. It pads
          nothing either.

    Pitfalls:
        - Use your own ``torch.Generator``, never the global RNG
          (``torch.manual_seed``): it would disturb the caller's randomness.
        - ``randperm(...)`` is a tensor: ``.tolist()`` gives Python ints.

    Forbidden: ``torch.utils.data.DistributedSampler`` (build the list yourself
    from ``randperm``, padding and a strided slice).
    """
    raise NotImplementedError


def worker_shard(indices: list[int], worker_id: int, num_workers: int) -> list[int]:
    """The part of one rank's ``indices`` that DataLoader worker ``worker_id`` loads.

    Spec:
        - Worker ``w`` of ``num_workers`` takes every ``num_workers``-th index
          starting at position ``w``: ``indices[w], indices[w + num_workers], ...``,
          in their order, as a new ``list`` (with one worker too: never the
          caller's list itself, which the caller may go on changing). Together the
          workers' shards hold every position of ``indices`` exactly once
          (duplicates included).
        - Raise ``ValueError`` if ``num_workers < 1`` or ``worker_id`` is not in
          ``[0, num_workers)``.

    Example:
        >>> worker_shard([7, 3, 9, 1, 4], 1, 2)
        [3, 1]

    Why strided: the DataLoader collects items from its workers round-robin
    (worker 0, 1, ..., 0, 1, ...), so strided shards come back in the rank's
    order. Contiguous blocks (worker 0 takes the first ``len // k`` ...) also
    split the list, but reorder it, and uneven lengths make them easy to get
    wrong. ``itertools.islice`` or a slice with a step does it in one line.
    """
    raise NotImplementedError
