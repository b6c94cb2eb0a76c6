"""Attack: the batch statistics of batch norm from ``F.group_norm`` with one group over
``x.transpose(0, 1)`` (each channel becomes a sample, normalised over the batch), the
running buffers by hand; evaluation by ``F.layer_norm``-free arithmetic is not attempted.
"""

import torch
import torch.nn.functional as F


def _per_channel(t, x):
    return t.reshape(1, -1, *([1] * (x.dim() - 2)))


def batch_norm_train(x, running_mean, running_var, num_batches_tracked, weight=None, bias=None,
                     momentum=0.1, eps=1e-5):
    n = x.numel() // x.shape[1]
    if n < 2:
        raise ValueError(f"batch norm in training needs more than one value per channel, got "
                         f"input of shape {list(x.shape)}")
    y = F.group_norm(x.transpose(0, 1), 1, eps=eps).transpose(0, 1)
    dims = [d for d in range(x.dim()) if d != 1]
    mean, var = x.mean(dims), x.var(dims)
    with torch.no_grad():
        num_batches_tracked.add_(1)
        factor = 1.0 / float(num_batches_tracked) if momentum is None else momentum
        running_mean.mul_(1 - factor).add_(factor * mean)
        running_var.mul_(1 - factor).add_(factor * var)
    if weight is not None:
        y = y * _per_channel(weight, x)
    if bias is not None:
        y = y + _per_channel(bias, x)
    return y


def batch_norm_eval(x, running_mean, running_var, weight=None, bias=None, eps=1e-5):
    raise NotImplementedError
