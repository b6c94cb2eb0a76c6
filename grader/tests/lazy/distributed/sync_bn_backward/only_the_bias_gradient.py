"""Do-nothing but a third: grad_bias, the plain sum of grad_output (reduced over the ranks in
the synchronised function's one all_reduce), is right; grad_input and grad_weight are zeros."""

import torch


def batch_norm_backward(grad_output, x, weight, eps=1e-5):
    dims = [0, *range(2, x.dim())]
    return torch.zeros_like(x), torch.zeros_like(weight), grad_output.sum(dim=dims)


def sync_batch_norm_backward(grad_output, x, weight, mean, invstd, all_reduce):
    dims = [0, *range(2, x.dim())]
    total = grad_output.sum(dim=dims)
    all_reduce(total)
    return torch.zeros_like(x), torch.zeros_like(weight), total
