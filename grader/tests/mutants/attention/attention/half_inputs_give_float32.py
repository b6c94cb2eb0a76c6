"""Mistake: upcasts float16 / bfloat16 inputs to float32 "for a stable softmax" and returns the
float32 results: output and p_attn must keep the inputs' dtype (cast back)."""

import math

import torch

CAUGHT_BY = ("test_reduced_precision_on_cpu",)


def attention(query, key, value, mask=None):
    if query.dtype in (torch.float16, torch.bfloat16):
        query, key, value = query.float(), key.float(), value.float()
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
