"""Mistake: folds the batch dims with `.view(-1, L, d)` to use `torch.bmm`: right for
contiguous inputs, but a transposed key or a strided query makes `view` raise ("view size
is not compatible with input tensor's size and stride"); `@` broadcasts batch dims itself."""

import math

import torch

CAUGHT_BY = ("test_matches_scaled_dot_product_attention",)


def attention(query, key, value, mask=None):
    batch = query.shape[:-2]
    l_q, d_k = query.shape[-2:]
    l_k, d_v = key.shape[-2], value.shape[-1]
    q = query.view(-1, l_q, d_k)
    k = key.view(-1, l_k, d_k)
    v = value.view(-1, l_k, d_v)
    scores = torch.bmm(q, k.transpose(1, 2)).view(*batch, l_q, l_k) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    out = torch.bmm(p_attn.reshape(-1, l_q, l_k), v).view(*batch, l_q, d_v)
    return out, p_attn


def subsequent_mask(size):
    return torch.ones(1, size, size, dtype=torch.bool).tril()


def padding_mask(lengths, max_len):
    if lengths.numel() and (lengths.min() < 0 or lengths.max() > max_len):
        raise ValueError("length out of range")
    return (torch.arange(max_len) < lengths.unsqueeze(-1)).unsqueeze(1)
