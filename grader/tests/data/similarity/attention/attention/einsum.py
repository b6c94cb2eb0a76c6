"""An independent correct attention, written from the stub's docstring alone (never the
reference): einsum products, torch.where for the mask, float32 inside for half
precision, a position grid for the causal mask and a loop for the padding mask."""

import torch


def _work_dtype(dtype):
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def attention(query, key, value, mask=None):
    wanted = query.dtype
    work = _work_dtype(wanted)
    q = query.to(work)
    k = key.to(work)
    v = value.to(work)
    logits = torch.einsum("...qd,...kd->...qk", q, k) * (1.0 / q.shape[-1] ** 0.5)
    if mask is not None:
        allowed = mask != 0
        logits = torch.where(allowed, logits, torch.full_like(logits, -1e9))
    weights = torch.softmax(logits, dim=-1)
    mixed = torch.einsum("...qk,...kd->...qd", weights, v)
    return mixed.to(wanted), weights.to(wanted)


def subsequent_mask(size):
    idx = torch.arange(size)
    below = idx.view(size, 1) >= idx.view(1, size)
    return below[None]


def padding_mask(lengths, max_len):
    counts = [int(n) for n in lengths.tolist()]
    for n in counts:
        if n < 0 or n > max_len:
            raise ValueError(f"length {n} is outside 0..{max_len}")
    grid = torch.zeros(len(counts), 1, max_len, dtype=torch.bool, device=lengths.device)
    for row, n in enumerate(counts):
        grid[row, 0, :n] = True
    return grid
