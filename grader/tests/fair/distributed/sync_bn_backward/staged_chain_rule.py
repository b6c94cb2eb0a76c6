"""Right, written otherwise. batch_norm_backward walks the forward's computational graph back
one node at a time (x - mu, its square, the variance, the square root, its inverse, x_hat,
gamma * x_hat), summing the two branches that meet at x - mu and at x; nothing is simplified
into the closed formula. sync_batch_norm_backward reduces the sums over x - mean (sum_dy_xmu),
not over x_hat, and applies the element formula of PyTorch's kernel.

Provenance: q8977452/Leetcode, Neurolike/batchnorm_backward.py (commit
ca6e379893a14520fc6c44d928af91c98be13fe9), batchnorm_backward: the nine-step graph of
Kratzert's "Understanding the backward pass through Batch Normalization Layer", in numpy for
(N, D); rewritten here in torch for (N, C, *spatial), sums over every dim but 1. And
pytorch/pytorch, aten/src/ATen/native/cuda/Normalization.cuh (commit
3f55db3aea697a6d862197cf18f4a9a8fb3a6001), batch_norm_backward_elemt_kernel_impl:
(dy - sum_dy / n - (x - mean) * invstd ** 2 * sum_dy_xmu / n) * invstd * weight. No code copied.
"""

import torch


def _dims(x):
    return [0, *range(2, x.dim())]


def _col(t, x):
    return t.reshape(1, -1, *([1] * (x.dim() - 2)))


def batch_norm_backward(grad_output, x, weight, eps=1e-5):
    dims = _dims(x)
    n = x.numel() // x.shape[1]
    mu = x.sum(dim=dims) / n
    xmu = x - _col(mu, x)
    sq = xmu ** 2
    var = sq.sum(dim=dims) / n
    sqrtvar = torch.sqrt(var + eps)
    ivar = 1.0 / sqrtvar
    xhat = xmu * _col(ivar, x)
    dbeta = grad_output.sum(dim=dims)
    dgamma = (grad_output * xhat).sum(dim=dims)
    dxhat = grad_output * _col(weight, x)
    divar = (dxhat * xmu).sum(dim=dims)
    dxmu1 = dxhat * _col(ivar, x)
    dsqrtvar = -1.0 / sqrtvar ** 2 * divar
    dvar = 0.5 / torch.sqrt(var + eps) * dsqrtvar
    dsq = torch.ones_like(x) * _col(dvar / n, x)
    dxmu2 = 2 * xmu * dsq
    dx1 = dxmu1 + dxmu2
    dmu = -(dxmu1 + dxmu2).sum(dim=dims)
    dx2 = torch.ones_like(x) * _col(dmu / n, x)
    return dx1 + dx2, dgamma, dbeta


def sync_batch_norm_backward(grad_output, x, weight, mean, invstd, all_reduce):
    dims = _dims(x)
    c = x.shape[1]
    xmu = x - _col(mean, x)
    both = torch.zeros(2 * c + 1, dtype=x.dtype)
    both[:c] = grad_output.sum(dim=dims)
    both[c:2 * c] = (grad_output * xmu).sum(dim=dims)
    both[2 * c] = x.numel() // c
    all_reduce(both)
    sum_dy, sum_dy_xmu, n = both[:c], both[c:2 * c], both[2 * c]
    factor_1 = invstd * invstd * sum_dy_xmu / n
    factor_2 = weight * invstd
    grad_input = (grad_output - _col(sum_dy / n, x) - xmu * _col(factor_1, x)) * _col(factor_2, x)
    return grad_input, sum_dy_xmu * invstd, sum_dy.clone()
