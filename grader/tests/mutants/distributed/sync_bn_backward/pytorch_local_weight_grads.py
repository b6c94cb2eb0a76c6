"""Mistake (by this drill's spec): nn.SyncBatchNorm's backward, which returns each rank's own
share of grad_weight and grad_bias (sum over its slice of dy * x_hat and of dy) and leaves
DDP's gradient all-reduce to combine them. grad_input is right; the spec asks for the whole
batch's grad_weight and grad_bias, which the reduced sums already are. Right on one rank only.

Provenance: pytorch/pytorch, torch/nn/modules/_functions.py (commit
016ec49da759b42af4b11b14ce22e8cbd840e5ab), SyncBatchNorm.backward: batch_norm_backward_reduce
gives the local sum_dy, sum_dy_xmu (over x - mean, not x_hat), grad_weight and grad_bias; one
all_reduce of cat([sum_dy, sum_dy_xmu]); batch_norm_backward_elemt with the forward's counts;
"synchronizing of grad_weight / grad_bias is not needed as distributed training would handle
all reduce". The element formula is aten/src/ATen/native/cuda/Normalization.cuh's
batch_norm_backward_elemt_kernel_impl (commit 3f55db3aea697a6d862197cf18f4a9a8fb3a6001):
(dy - sum_dy / n - (x - mean) * invstd ** 2 * sum_dy_xmu / n) * invstd * weight. Rewritten
here in torch, with the count packed into the one all_reduce since no forward saved it
(no code copied).
"""

from collections.abc import Callable

import torch

CAUGHT_BY = ("test_sync_backward_matches_autograd_on_the_concatenation",)

AllReduce = Callable[[torch.Tensor], object]


def _planes(t, x):
    return t.view(1, -1, *([1] * (x.dim() - 2)))


def batch_norm_backward(grad_output, x, weight, eps=1e-5):
    dims = [0, *range(2, x.dim())]
    var, mean = torch.var_mean(x, dim=dims, correction=0)
    invstd = torch.rsqrt(var + eps)
    return sync_batch_norm_backward(grad_output, x, weight, mean, invstd, lambda t: None)


def sync_batch_norm_backward(grad_output, x, weight, mean, invstd, all_reduce):
    dims = [0, *range(2, x.dim())]
    c = x.shape[1]
    xmu = x - _planes(mean, x)
    sum_dy = grad_output.sum(dim=dims)
    sum_dy_xmu = (grad_output * xmu).sum(dim=dims)
    grad_weight = sum_dy_xmu * invstd
    grad_bias = sum_dy.clone()
    combined = torch.cat([sum_dy, sum_dy_xmu, x.new_tensor([x.numel() // c])])
    all_reduce(combined)
    sum_dy, sum_dy_xmu, n = combined[:c], combined[c:2 * c], combined[-1]
    mean_dy = sum_dy / n
    proj = invstd * invstd * sum_dy_xmu / n
    grad_input = (grad_output - _planes(mean_dy, x) - xmu * _planes(proj, x)) * _planes(invstd * weight, x)
    return grad_input, grad_weight, grad_bias
