"""Mistake: len(loader) as dataset_len // batch_size, which is the drop_last answer
only: without drop_last the short last batch is not counted."""

from __future__ import annotations

CAUGHT_BY = ('test_num_batches_matches_len_of_a_dataloader',)


def _check_batch_size(batch_size: int) -> None:
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")


def num_batches(dataset_len: int, batch_size: int, drop_last: bool = False) -> int:
    _check_batch_size(batch_size)
    if dataset_len < 0:
        raise ValueError(f"dataset_len must be non-negative, got {dataset_len}")
    return dataset_len // batch_size
