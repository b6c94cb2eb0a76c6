"""Your own autograd Functions: a forward, and the backward that goes with it.

``torch.autograd.Function`` lets you write both halves of an operation: ``forward``
computes the result (autograd does not record what happens inside it) and
``backward`` receives the gradient of the loss with respect to the result and returns
the gradient with respect to each input. Two reasons to write one: a backward that is
cheaper or more stable than autograd's (log-sum-exp below), and a "gradient" that is
not the derivative at all (the straight-through estimator, used for quantisation).
"""

from __future__ import annotations

from typing import Any

import torch


class LogSumExp(torch.autograd.Function):
    """``log(sum(exp(x)))`` along ``dim``, computed without overflow.

    forward(ctx, x, dim, keepdim):
        With ``m = x.amax(dim, keepdim=True)``, the result is
        ``m + log(sum(exp(x - m)))`` along ``dim``: every ``exp`` is at most 1, so
        nothing overflows, even for x around 1000 (where ``exp(x)`` is ``inf``).
        Keep ``dim`` (as a size-1 dim) only if ``keepdim``. Save what backward
        needs with ``ctx.save_for_backward(...)`` (tensors) and plain attributes
        (``ctx.dim = dim``) for the rest.

    backward(ctx, grad):
        ``d out / d x = exp(x - out)``, the softmax of x along ``dim``, so the
        gradient w.r.t. x is ``grad * exp(x - out)``, with ``grad`` (shaped like
        the result) given back its ``dim`` first when ``keepdim`` was False
        (``grad.unsqueeze(dim)``). Return ONE value per input of forward, in order:
        the tensor for ``x`` and ``None`` for ``dim`` and ``keepdim`` (they are not
        tensors). ``ctx.needs_input_grad[0]`` says whether x's gradient is wanted at
        all: when it is False, return None for it and skip the work.
    """

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        raise NotImplementedError

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, None, None]:
        raise NotImplementedError


def logsumexp(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    """``LogSumExp.apply(x, dim, keepdim)``: equal to ``torch.logsumexp(x, dim, keepdim)``,
    values and gradients.

    Shapes: ``x`` is a float tensor with at least one dim and at least one element
    along ``dim`` (which may be negative); the result has x's shape without ``dim``
    (or with it as size 1 when ``keepdim``), in x's dtype.

    Example:
        >>> x = torch.tensor([[0., 0.], [1000., 1000.]], requires_grad=True)
        >>> y = logsumexp(x, 1)
        >>> y                                       # log 2 and 1000 + log 2
        tensor([6.9315e-01, 1.0007e+03], grad_fn=<LogSumExpBackward>)
        >>> y.sum().backward(); x.grad              # the softmax of each row
        tensor([[0.5000, 0.5000], [0.5000, 0.5000]])

    Pitfalls:
        - Saving the wrong tensors: backward needs x and the result (or the max);
          saving ``exp(x)`` and dividing by its sum in backward overflows exactly
          where the forward was careful not to (``inf / inf`` is NaN).
        - In-place changes to an input (``x.sub_(m)``): the caller's tensor changes,
          and a tensor saved for backward that is changed afterwards makes backward
          fail ("modified by an inplace operation"). Compute into new tensors.
        - backward returns a gradient for EVERY input of forward: one value only
          (for x) raises "returned an incorrect number of gradients"; a tensor for
          ``dim`` raises too.

    Forbidden: ``torch.logsumexp`` (``Tensor.logsumexp``, ``torch.special.logsumexp``):
    compute it from ``amax``, ``exp``, ``sum`` and ``log``.
    """
    raise NotImplementedError


class StraightThroughClamp(torch.autograd.Function):
    """Forward: ``x.clamp(min, max)``. Backward: the incoming gradient, unchanged.

    The true derivative of a clamp is 0 wherever x lies outside [min, max], so
    nothing outside would ever learn to come back in. The straight-through estimator
    pretends the clamp was the identity: backward passes ``grad`` through as it is,
    everywhere. Return one value per input: the gradient for x, None for min and max.
    """

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, min: float, max: float) -> torch.Tensor:
        raise NotImplementedError

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, None, None]:
        raise NotImplementedError


def clamp_ste(x: torch.Tensor, min: float, max: float) -> torch.Tensor:
    """``StraightThroughClamp.apply(x, min, max)`` (``min <= max``, two Python floats).

    Example:
        >>> x = torch.tensor([-2., 0.5, 3.], requires_grad=True)
        >>> y = clamp_ste(x, -1., 1.)
        >>> y
        tensor([-1.0000,  0.5000,  1.0000], grad_fn=<StraightThroughClampBackward>)
        >>> (y * torch.tensor([1., 2., 3.])).sum().backward(); x.grad
        tensor([1., 2., 3.])                        # autograd's clamp would give [0., 2., 0.]

    Pitfall: ``x.clamp(min, max)`` alone, through autograd, gives the true derivative
    (zeros outside the range), not the straight-through one.
    """
    raise NotImplementedError
