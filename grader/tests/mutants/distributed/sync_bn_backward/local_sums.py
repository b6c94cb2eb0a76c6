"""Mistake: reduces only the count and keeps this rank's own sums: every rank differentiates as
if its slice were the whole batch (and returns its own share of grad_weight and grad_bias)."""

from collections.abc import Callable

import torch

CAUGHT_BY = ("test_sync_backward_matches_autograd_on_the_concatenation",)

AllReduce = Callable[[torch.Tensor], object]


def _reduced_dims(x: torch.Tensor) -> tuple[int, ...]:
    """Every dim but the channel dim 1."""
    return (0, *range(2, x.dim()))


def _per_channel(t: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """A ``(C,)`` tensor as ``(1, C, 1, ..., 1)``, to broadcast along ``x``'s dim 1."""
    return t.reshape((1, x.shape[1]) + (1,) * (x.dim() - 2))


def _grad_input(grad_output: torch.Tensor, x_hat: torch.Tensor, weight: torch.Tensor,
                invstd: torch.Tensor, sum_dy: torch.Tensor, sum_dy_xhat: torch.Tensor,
                count: torch.Tensor) -> torch.Tensor:
    """weight * invstd * (dy - mean(dy) - x_hat * mean(dy * x_hat)), the means over ``count``."""
    centred = grad_output - _per_channel(sum_dy / count, x_hat) - x_hat * _per_channel(sum_dy_xhat / count, x_hat)
    return _per_channel(weight * invstd, x_hat) * centred


def batch_norm_backward(
    grad_output: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-5,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The statistics of x itself, then the two sums and the formula."""
    dims = _reduced_dims(x)
    mean = x.mean(dim=dims)
    centred = x - _per_channel(mean, x)
    invstd = torch.rsqrt((centred * centred).mean(dim=dims) + eps)
    x_hat = centred * _per_channel(invstd, x)
    sum_dy = grad_output.sum(dim=dims)
    sum_dy_xhat = (grad_output * x_hat).sum(dim=dims)
    count = x.new_tensor(x.numel() // x.shape[1])
    return _grad_input(grad_output, x_hat, weight, invstd, sum_dy, sum_dy_xhat, count), sum_dy_xhat, sum_dy


def sync_batch_norm_backward(
    grad_output: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, mean: torch.Tensor,
    invstd: torch.Tensor, all_reduce: AllReduce,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """This rank's sums and count, one all_reduce of [sum_dy, sum_dy_xhat, count], the formula."""
    dims = _reduced_dims(x)
    channels = x.shape[1]
    x_hat = (x - _per_channel(mean, x)) * _per_channel(invstd, x)
    packed = torch.cat([grad_output.sum(dim=dims), (grad_output * x_hat).sum(dim=dims),
                        x.new_tensor([x.numel() // channels])])
    local = packed.clone()
    all_reduce(packed)
    sum_dy, sum_dy_xhat, count = local[:channels], local[channels:-1], packed[-1]
    return _grad_input(grad_output, x_hat, weight, invstd, sum_dy, sum_dy_xhat, count), sum_dy_xhat, sum_dy
