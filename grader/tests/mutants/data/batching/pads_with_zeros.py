"""Mistake: pads with zeros whatever padding_value says."""

from __future__ import annotations

import torch

CAUGHT_BY = ('test_pad_collate_matches_default_collate_and_pad_sequence',)

Sample = dict[str, "torch.Tensor | int | float | str"]


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
    keys = list(samples[0])
    if any(set(s) != set(keys) for s in samples):
        raise ValueError("the samples do not all have the same keys")
    batch: dict = {}
    for key in keys:
        values = [s[key] for s in samples]
        if all(isinstance(v, torch.Tensor) for v in values):
            batch.update(_collate_tensors(key, values, 0))
        elif all(type(v) is int for v in values):
            batch[key] = torch.tensor(values, dtype=torch.int64)
        elif all(type(v) is float for v in values):
            batch[key] = torch.tensor(values, dtype=torch.float64)
        elif all(type(v) is str for v in values):
            batch[key] = list(values)
        else:
            raise ValueError(f"the values of {key!r} are of mixed kinds")
    return batch
