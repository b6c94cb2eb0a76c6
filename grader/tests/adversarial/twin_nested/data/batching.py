"""Attack: the padding collate through nested tensors,
``torch.nested.nested_tensor(values).to_padded_tensor(padding_value)``; the batches are
not attempted.
"""

from __future__ import annotations

import torch

Sample = dict[str, "torch.Tensor | int | float | str"]


def _check_batch_size(batch_size: int) -> None:
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")


def batch_indices(order: list[int], batch_size: int, drop_last: bool = False) -> list[list[int]]:
    raise NotImplementedError


def num_batches(dataset_len: int, batch_size: int, drop_last: bool = False) -> int:
    raise NotImplementedError


def _collate_tensors(key: str, values: list[torch.Tensor], padding_value: int | float) -> dict:
    first = values[0]
    if all(v.shape == first.shape and v.dtype == first.dtype for v in values):
        return {key: torch.stack(values)}
    if first.dim() == 0 or any(v.dim() != first.dim() or v.shape[1:] != first.shape[1:]
                               or v.dtype != first.dtype for v in values):
        raise ValueError(f"the tensors of {key!r} differ in more than their first dim: "
                         f"{[tuple(v.shape) for v in values]}, {sorted({str(v.dtype) for v in values})}")
    lengths = [v.shape[0] for v in values]
    padded = torch.nested.nested_tensor(values).to_padded_tensor(padding_value)
    return {key: padded, f"{key}_lengths": torch.tensor(lengths, dtype=torch.int64)}


def pad_collate(samples: list[Sample], padding_value: int | float = 0) -> dict:
    if not samples:
        raise ValueError("no samples to collate")
    keys = list(samples[0])
    if any(set(s) != set(keys) for s in samples):
        raise ValueError("the samples do not all have the same keys")
    batch: dict = {}
    for key in keys:
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
