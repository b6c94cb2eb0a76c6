"""Mistake: the batch's keys follow the last sample's key order (the key check's loop
variable, left over after the loop), not the first sample's: the same batch whenever every
sample lists its keys in one order, keys out of order when the samples' dicts were built in
different orders (samples read from JSON, or merged from several sources)."""

from __future__ import annotations

import torch

CAUGHT_BY = ("test_pad_collate_matches_default_collate_and_pad_sequence",)

Sample = dict[str, "torch.Tensor | int | float | str"]


def _check_batch_size(batch_size: int) -> None:
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")


def batch_indices(order: list[int], batch_size: int, drop_last: bool = False) -> list[list[int]]:
    _check_batch_size(batch_size)
    batches = [list(order[i:i + batch_size]) for i in range(0, len(order), batch_size)]
    if drop_last and batches and len(batches[-1]) < batch_size:
        batches.pop()
    return batches


def num_batches(dataset_len: int, batch_size: int, drop_last: bool = False) -> int:
    _check_batch_size(batch_size)
    if dataset_len < 0:
        raise ValueError(f"dataset_len must be non-negative, got {dataset_len}")
    return dataset_len // batch_size if drop_last else -(-dataset_len // batch_size)


def _collate_tensors(key: str, values: list[torch.Tensor], padding_value: int | float) -> dict:
    first = values[0]
    if all(v.shape == first.shape and v.dtype == first.dtype for v in values):
        return {key: torch.stack(values)}
    if first.dim() == 0 or any(v.dim() != first.dim() or v.shape[1:] != first.shape[1:]
                               or v.dtype != first.dtype for v in values):
        raise ValueError(f"the tensors of {key!r} differ in more than their first dim: "
                         f"{[tuple(v.shape) for v in values]}, {sorted({str(v.dtype) for v in values})}")
    lengths = [v.shape[0] for v in values]
    padded = torch.full((len(values), max(lengths), *first.shape[1:]), padding_value,
                        dtype=first.dtype, device=first.device)
    for row, v in zip(padded, values):
        row[:v.shape[0]] = v
    return {key: padded, f"{key}_lengths": torch.tensor(lengths, dtype=torch.int64)}


def pad_collate(samples: list[Sample], padding_value: int | float = 0) -> dict:
    if not samples:
        raise ValueError("no samples to collate")
    for sample in samples:
        if set(sample) != set(samples[0]):
            raise ValueError("the samples do not all have the same keys")
    batch: dict = {}
    for key in sample:  # the loop's leftover: the LAST sample's key order
        values = [s[key] for s in samples]
        if all(isinstance(v, torch.Tensor) for v in values):
            batch.update(_collate_tensors(key, values, padding_value))
        elif all(type(v) is int for v in values):
            batch[key] = torch.tensor(values, dtype=torch.int64)
        elif all(type(v) is float for v in values):
            batch[key] = torch.tensor(values, dtype=torch.float64)
        elif all(type(v) is str for v in values):
            batch[key] = list(values)
        else:
            raise ValueError(f"the values of {key!r} are of mixed kinds")
    return batch
