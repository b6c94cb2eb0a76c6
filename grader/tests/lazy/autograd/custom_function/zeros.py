"""Do-nothing: zeros of the result's shape, attached to x's graph; clamp_ste likewise."""

import torch


def logsumexp(x, dim, keepdim=False):
    return (x * 0).sum(dim, keepdim=keepdim)


def clamp_ste(x, min, max):
    return x * 0
