"""Reference solution: scaled dot-product attention and its masks."""

from __future__ import annotations

import math

import torch


def attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
              mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q kᵀ / sqrt(d_k), masked to -1e9 where mask == 0) @ v, and the weights; any
    memory layout, the inputs' dtype, a softmax that does not overflow on large scores."""
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    return p_attn @ value, p_attn


def subsequent_mask(size: int) -> torch.Tensor:
    """(1, size, size) bool, True where key j <= query i."""
    return torch.ones(1, size, size, dtype=torch.bool).tril()


def padding_mask(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    """(B, 1, max_len) bool, True on the first lengths[b] positions."""
    if lengths.numel() and (lengths.min() < 0 or lengths.max() > max_len):
        raise ValueError(f"lengths must lie in [0, {max_len}], got {lengths.tolist()}")
    positions = torch.arange(max_len, device=lengths.device)
    return (positions < lengths.unsqueeze(-1)).unsqueeze(1)
