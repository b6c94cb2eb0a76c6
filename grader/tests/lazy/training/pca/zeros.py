"""Do-nothing: zero components (k, D) and zero projections (N, k) in x's dtype."""

import torch


def pca(x, k):
    return x.new_zeros((k, x.shape[1])), x.new_zeros((x.shape[0], k))
