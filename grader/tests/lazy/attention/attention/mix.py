"""Do-nothing, the best per function: attention ignores the scores and spreads each query's
weight evenly over the keys the mask allows (all keys when none is allowed), so rows sum to 1,
masked keys get 0 and fully masked rows are uniform; subsequent_mask is all False;
padding_mask checks its lengths (ValueError) and is all False."""

import torch


def attention(query, key, value, mask=None):
    shape = (*query.shape[:-1], key.shape[-2])
    allowed = torch.ones(shape, dtype=query.dtype)
    if mask is not None:
        allowed = (mask != 0).expand(shape).to(query.dtype)
        allowed = torch.where(allowed.sum(-1, keepdim=True) == 0, torch.ones_like(allowed), allowed)
    p = allowed / allowed.sum(-1, keepdim=True)
    return p @ value, p


def subsequent_mask(size):
    return torch.zeros(1, size, size, dtype=torch.bool)


def padding_mask(lengths, max_len):
    if lengths.numel() and (lengths.min() < 0 or lengths.max() > max_len):
        raise ValueError("a length is out of range")
    return torch.zeros(len(lengths), 1, max_len, dtype=torch.bool, device=lengths.device)
