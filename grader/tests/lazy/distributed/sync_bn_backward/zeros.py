"""Do-nothing: zeros of the right shapes and dtype. The synchronised function still makes its
one all_reduce (of a zero tensor of length 2C + 1), so the ranks meet and the call count is
right."""

import torch


def batch_norm_backward(grad_output, x, weight, eps=1e-5):
    return torch.zeros_like(x), torch.zeros_like(weight), torch.zeros_like(weight)


def sync_batch_norm_backward(grad_output, x, weight, mean, invstd, all_reduce):
    all_reduce(x.new_zeros(2 * x.shape[1] + 1))
    return torch.zeros_like(x), torch.zeros_like(weight), torch.zeros_like(weight)
