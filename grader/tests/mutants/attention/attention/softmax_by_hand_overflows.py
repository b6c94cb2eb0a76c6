"""Mistake: softmax by hand, `exp(scores) / exp(scores).sum(-1)`, without subtracting the row's
maximum: scores in the thousands overflow exp to inf and the weights become inf / inf = nan
(and a fully masked row is 0 / 0)."""

import math

import torch

CAUGHT_BY = ("test_large_scores_stay_finite", "test_fully_masked_rows_attend_uniformly")


def attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    e = scores.exp()
    p_attn = e / e.sum(dim=-1, keepdim=True)
    return p_attn @ value, p_attn


def subsequent_mask(size):
    return torch.ones(1, size, size, dtype=torch.bool).tril()


def padding_mask(lengths, max_len):
    if lengths.numel() and (lengths.min() < 0 or lengths.max() > max_len):
        raise ValueError("length out of range")
    return (torch.arange(max_len) < lengths.unsqueeze(-1)).unsqueeze(1)
