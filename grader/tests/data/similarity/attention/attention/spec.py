"""An independent correct attention, written from the stub's docstring alone (never the
reference): the spec's four steps in its own words, an upcast for float16."""

import math

import torch


def attention(query, key, value, mask=None):
    dtype = query.dtype
    if dtype == torch.float16:
        query, key, value = query.float(), key.float(), value.float()
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    output = torch.matmul(p_attn, value)
    return output.to(dtype), p_attn.to(dtype)


def subsequent_mask(size):
    ones = torch.ones(1, size, size, dtype=torch.bool)
    return torch.tril(ones)


def padding_mask(lengths, max_len):
    if (lengths < 0).any() or (lengths > max_len).any():
        raise ValueError("lengths must lie in 0..max_len")
    positions = torch.arange(max_len, device=lengths.device)
    return (positions < lengths.unsqueeze(1)).unsqueeze(1)
