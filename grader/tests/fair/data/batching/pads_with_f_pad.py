"""Right, written another way: batches cut with itertools.islice from an iterator (as
BatchSampler itself does), the number of batches from divmod (the full batches, and one more
for a remainder unless it is dropped: exact for any int, as in mpdunne/easyloader,
easyloader/common/utils.py, get_n_batches; math.ceil(n / b) went through a float), and each
sequence padded on its own with F.pad (the far end of dim 0) before one torch.stack."""

import itertools

import torch
import torch.nn.functional as F


def batch_indices(order, batch_size, drop_last=False):
    if batch_size < 1:
        raise ValueError("batch_size must be positive")
    it = iter(order)
    batches = []
    while batch := list(itertools.islice(it, batch_size)):
        if drop_last and len(batch) < batch_size:
            break
        batches.append(batch)
    return batches


def num_batches(dataset_len, batch_size, drop_last=False):
    if batch_size < 1 or dataset_len < 0:
        raise ValueError("sizes must be non-negative and batch_size positive")
    full, rest = divmod(dataset_len, batch_size)
    return full + (1 if rest and not drop_last else 0)


def pad_collate(samples, padding_value=0):
    if not samples or any(s.keys() != samples[0].keys() for s in samples):
        raise ValueError("the samples must share their keys")
    out: dict = {}  # lists of strings and tensors alike
    for key in samples[0]:
        values = [s[key] for s in samples]
        first = values[0]
        if isinstance(first, str):
            out[key] = values
        elif not isinstance(first, torch.Tensor):
            out[key] = torch.tensor(values, dtype=torch.float64 if isinstance(first, float) else torch.int64)
        elif all(v.shape == first.shape and v.dtype == first.dtype for v in values):
            out[key] = torch.stack(values)
        else:
            if first.dim() == 0 or any(v.shape[1:] != first.shape[1:] or v.dim() != first.dim()
                                       or v.dtype != first.dtype for v in values):
                raise ValueError(f"{key}: the tensors differ beyond their first dim")
            longest = max(v.shape[0] for v in values)
            tail = [0, 0] * (first.dim() - 1)
            out[key] = torch.stack([F.pad(v, tail + [0, longest - v.shape[0]], value=padding_value)
                                    for v in values])
            out[key + "_lengths"] = torch.tensor([v.shape[0] for v in values])
    return out
