"""Evaluation metrics: IoU of masks, Pearson correlation, mean absolute error.

Three small metrics that are easy to write and easy to get wrong at the edges:
an empty union, a constant input, shapes that broadcast when they should not.
Each returns a 0-d tensor on the inputs' device, and each degenerate case has a
defined answer instead of a nan.
"""

from __future__ import annotations

import torch


def iou(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Return the intersection over union of two boolean masks.

    Spec:
        - ``pred`` and ``target`` are ``torch.bool`` tensors of the SAME shape (any
          shape: 0-d, empty, images, batches); each is one set of True positions.
        - ``iou = |pred & target| / |pred | target|`` (counts of True), returned as a
          0-d ``torch.float32`` tensor on the masks' device.
        - Empty union (both masks all False, or no elements at all): return 1.0, the
          masks agree perfectly. Not 0 / 0 = nan.
        - Raise ``ValueError`` if a mask is not bool or the shapes differ in any way
          (no broadcasting: a (H, W) mask against a (1, H, W) or a (1, W) one is a bug
          upstream; nor reshaping: (2, 3) against (3, 2) differ too).
        - The masks may be non-contiguous (a transposed mask, a strided view).

    Example:
        >>> pred = torch.tensor([[True, True], [False, False]])
        >>> target = torch.tensor([[True, False], [True, False]])
        >>> iou(pred, target)                   # 1 in both, 3 in either
        tensor(0.3333)
        >>> iou(torch.zeros(3, dtype=torch.bool), torch.zeros(3, dtype=torch.bool))
        tensor(1.)

    Pitfalls:
        - Integer counts divided with ``//`` give 0; convert to float before dividing.
        - The union is NOT ``pred.sum() + target.sum()`` (that counts the
          intersection twice: it is the denominator of Dice, not of IoU).
        - Return the 1.0 of the empty case as a float32 tensor on the masks' device
          (``torch.ones((), device=pred.device)``), like the normal case.
    """
    raise NotImplementedError


def pearson(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Return the Pearson correlation coefficient of paired samples ``x`` and ``y``.

    Spec:
        - ``x`` and ``y`` are floating tensors of the same shape with at least one
          element, in any memory layout; every position is one (x, y) sample (flatten
          them with ``reshape(-1)``: ``view(-1)`` refuses a transposed tensor).
        - ``r = sum(xc * yc) / (sqrt(sum(xc ** 2)) * sqrt(sum(yc ** 2)))`` with
          ``xc = x - x.mean()`` and ``yc = y - y.mean()``; a 0-d tensor with the
          inputs' dtype (float16 and bfloat16 included) and device, in ``[-1, 1]``.
        - Zero variance: if all elements of ``x`` are equal, or all of ``y`` are,
          return exactly 0 (a constant carries no linear relationship). Decide it with
          ``x.max() == x.min()``, not with the computed variance: the mean of
          ``[0.1, 0.1, 0.1]`` is 0.10000000000000002, so ``x - x.mean()`` is not exactly
          0 and the "variance" comes out as ~1e-34 instead of 0.
        - Raise ``ValueError`` if the shapes differ (in any dim, even when they would
          broadcast or hold as many elements) or there is no element.

    Example:
        >>> pearson(torch.tensor([1., 2., 3., 4.]), torch.tensor([2., 4., 5., 9.]))
        tensor(0.9648)
        >>> pearson(torch.tensor([1., 2., 3.]), torch.tensor([5., 5., 5.]))
        tensor(0.)

    Pitfalls:
        - ``torch.corrcoef`` (and the bare formula) give nan or noise for a constant
          input; the spec asks for 0.
        - The same normalisation on both sides: either population or sample
          (co)variances everywhere; mixing them scales r by n / (n - 1).
        - Centre BEFORE multiplying. The one-pass formulas
          ``n * sum(x * y) - sum(x) * sum(y)`` or ``E[xy] - E[x] * E[y]`` subtract huge,
          nearly equal numbers when the samples sit far from 0 (around 1e6, say), and
          the difference is rounding noise even in float64.
    """
    raise NotImplementedError


def mae(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Return the mean absolute error ``mean(|x - y|)`` over all elements.

    Spec:
        - ``x`` and ``y`` are floating tensors of the SAME shape with at least one
          element, in any memory layout; the result is a 0-d tensor with their dtype
          (float16 and bfloat16 included) and device.
        - Raise ``ValueError`` if the shapes differ in any dim (even when they broadcast,
          or hold as many elements: (2, 3) against (3, 2)) or if there is no element.

    Example:
        >>> mae(torch.tensor([1., 2., 3.]), torch.tensor([2., 2., 5.]))
        tensor(1.)

    Pitfall: predictions of shape ``(N, 1)`` against targets of shape ``(N,)``
    broadcast to ``(N, N)``: every prediction is compared with every target and the
    "error" is silently wrong. Check the shapes before subtracting.
    """
    raise NotImplementedError
