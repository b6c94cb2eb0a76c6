"""From a sampler's order to the batches a DataLoader hands out.

A ``DataLoader`` with ``batch_size`` does three things you rarely see: a
``BatchSampler`` cuts the sampler's order of indices into batches, the dataset
is read at those indices, and a ``collate_fn`` turns the list of samples into
one batch of tensors. ``len(loader)`` is the number of batches, which is where
``drop_last`` shows. Rebuild the three pieces as plain functions.

Forbidden: ``torch.utils.data.BatchSampler``, ``torch.utils.data.DataLoader``,
``torch.utils.data.default_collate`` and ``torch.nn.utils.rnn.pad_sequence``.
"""

import torch

Sample = dict[str, "torch.Tensor | int | float | str"]


def batch_indices(order: list[int], batch_size: int, drop_last: bool = False) -> list[list[int]]:
    """The batches ``BatchSampler(order, batch_size, drop_last)`` yields, as a list.

    Spec:
        - ``order`` is the sampler's order of dataset indices (any ints, in any
          order, repeats allowed). Cut it, in that order, into consecutive
          batches of ``batch_size`` indices; the last batch holds whatever is
          left (fewer), unless ``drop_last`` is True: then a short last batch is
          dropped.
        - Return a ``list`` of ``list`` of Python ``int``, new lists (never the
          caller's ``order``).
        - ``ValueError`` if ``batch_size < 1``.

    Example:
        >>> batch_indices([4, 1, 0, 3, 2], 2)
        [[4, 1], [0, 3], [2]]
        >>> batch_indices([4, 1, 0, 3, 2], 2, drop_last=True)
        [[4, 1], [0, 3]]
    """
    raise NotImplementedError


def num_batches(dataset_len: int, batch_size: int, drop_last: bool = False) -> int:
    """``len(DataLoader(dataset, batch_size=batch_size, drop_last=drop_last))`` for a
    map-style dataset of ``dataset_len`` items.

    Spec:
        - The number of batches ``batch_indices`` gives for an order of
          ``dataset_len`` indices: rounded up without ``drop_last``, down with it.
          An empty dataset has no batches.
        - A Python ``int``. ``ValueError`` if ``batch_size < 1`` or
          ``dataset_len < 0``.

    Example:
        >>> num_batches(10, 3), num_batches(10, 3, drop_last=True)
        (4, 3)

    Pitfall the notes warn about: ``dataset_len // batch_size`` is the
    ``drop_last`` answer only; without it the short last batch counts too (an
    epoch loop that uses ``//`` for a progress bar or a learning-rate schedule is
    one step short). ``math.ceil(dataset_len / batch_size)`` goes through a
    float; ``-(-n // b)`` stays exact.
    """
    raise NotImplementedError


def pad_collate(samples: list[Sample], padding_value: int | float = 0) -> dict:
    """Collate a list of dict samples into one batch, padding sequences of unequal length.

    Spec (``samples`` is a non-empty list of dicts that all have the same keys):
        - The result is a ``dict`` with one entry per key, in the first sample's
          key order, made from the values of that key in every sample (B of them):
            * tensors that all have one shape: stacked into ``(B, *shape)``,
              exactly what ``default_collate`` does;
            * tensors of at least one dim, of one dtype, whose shapes differ ONLY
              in dim 0 (sequences of lengths ``T_i``): a tensor of shape
              ``(B, max T_i, *rest)``, row ``i`` holding sample ``i``'s sequence
              at its start and ``padding_value`` after it (the sequences' dtype),
              and, right after this key, a new key ``key + "_lengths"``: the
              lengths ``T_i`` as an int64 tensor on the CPU;
            * Python ``int`` values: an int64 tensor of shape ``(B,)``; ``float``
              values: a float64 tensor of shape ``(B,)`` (as ``default_collate``);
            * ``str`` values: the list of them.
        - Tensors stay on their device, and every tensor returned is new memory.
          The samples are left unchanged.
        - ``ValueError`` if ``samples`` is empty, if the samples' keys differ, or
          if a key's tensors differ in anything but dim 0 (number of dims,
          trailing shape, dtype).

    Example:
        >>> samples = [{"tokens": torch.tensor([5, 6, 7]), "label": 1},
        ...            {"tokens": torch.tensor([8]), "label": 0}]
        >>> pad_collate(samples)
        {'tokens': tensor([[5, 6, 7],
                [8, 0, 0]]), 'tokens_lengths': tensor([3, 1]), 'label': tensor([1, 0])}

    Pitfall the notes warn about: ``default_collate`` stacks, and ``torch.stack``
    refuses tensors of unequal lengths ("stack expects each tensor to be equal
    size"): text and audio batches need a ``collate_fn`` of their own that pads,
    and keeps the true lengths (for masks and ``pack_padded_sequence``).
    """
    raise NotImplementedError
