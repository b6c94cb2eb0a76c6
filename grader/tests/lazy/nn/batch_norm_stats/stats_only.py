"""Do-nothing for the output: updates the buffers correctly (the easy half) and returns x
unnormalised; evaluation returns x."""

import torch


def batch_norm_train(x, running_mean, running_var, num_batches_tracked, weight=None, bias=None,
                     momentum=0.1, eps=1e-5):
    dims = [d for d in range(x.dim()) if d != 1]
    n = x.numel() // x.shape[1]
    if n < 2:
        raise ValueError("one value per channel")
    with torch.no_grad():
        num_batches_tracked.add_(1)
        f = 1.0 / float(num_batches_tracked) if momentum is None else momentum
        running_mean.mul_(1 - f).add_(f * x.mean(dims))
        running_var.mul_(1 - f).add_(f * x.var(dims))
    return x.clone()


def batch_norm_eval(x, running_mean, running_var, weight=None, bias=None, eps=1e-5):
    return x.clone()
