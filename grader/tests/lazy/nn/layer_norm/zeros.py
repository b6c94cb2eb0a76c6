"""Do-nothing: zeros of x's shape and dtype."""

import torch


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    return torch.zeros_like(x)
