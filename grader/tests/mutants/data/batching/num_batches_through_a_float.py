"""Mistake: the number of batches counted through a float, math.ceil(dataset_len / batch_size)
(math.floor with drop_last), the pitfall the stub warns about. A float holds every int only up
to 2**53: num_batches(2**53 + 1, 1) comes out as 2**53, and past it the count is off by up to
hundreds.

Seen in real code: HemanthSai7/moonshine, src/utils/math_util.py (get_num_batches rounds
float(nsamples) / float(batch_size) up, or down when the remainder is dropped); this course's
own fair corpus counted that way too until lengths past 2**53 were drawn."""

from __future__ import annotations

import math

CAUGHT_BY = ('test_num_batches_matches_len_of_a_dataloader',)


def num_batches(dataset_len: int, batch_size: int, drop_last: bool = False) -> int:
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    if dataset_len < 0:
        raise ValueError(f"dataset_len must be non-negative, got {dataset_len}")
    ratio = dataset_len / batch_size
    return math.floor(ratio) if drop_last else math.ceil(ratio)
