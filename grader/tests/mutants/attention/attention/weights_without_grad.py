"""Mistake: computes the attention weights under `torch.no_grad()` "to save memory": the values
are right, but no gradient reaches query and key through them (only value gets one)."""

import math

import torch

CAUGHT_BY = ("test_gradients_match_reference",)


def attention(query, key, value, mask=None):
    with torch.no_grad():
        scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        p_attn = scores.softmax(dim=-1)
    return p_attn @ value, p_attn


def subsequent_mask(size):
    return torch.ones(1, size, size, dtype=torch.bool).tril()


def padding_mask(lengths, max_len):
    if lengths.numel() and (lengths.min() < 0 or lengths.max() > max_len):
        raise ValueError("length out of range")
    return (torch.arange(max_len) < lengths.unsqueeze(-1)).unsqueeze(1)
