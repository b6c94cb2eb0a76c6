"""Mix: every ValueError the spec asks for, around do-nothing answers (one batch of the
whole order, no batches, the first sample as the batch)."""

import torch


def batch_indices(order, batch_size, drop_last=False):
    if batch_size < 1:
        raise ValueError("batch_size")
    return [list(order)]


def num_batches(dataset_len, batch_size, drop_last=False):
    if batch_size < 1 or dataset_len < 0:
        raise ValueError("sizes")
    return 0


def pad_collate(samples, padding_value=0):
    if not samples or any(set(s) != set(samples[0]) for s in samples):
        raise ValueError("keys")
    for key, value in samples[0].items():
        if isinstance(value, torch.Tensor):
            for s in samples:
                other = s[key]
                if other.dim() != value.dim() or other.shape[1:] != value.shape[1:] or other.dtype != value.dtype:
                    raise ValueError("shapes")
    return dict(samples[0])
