"""Cross-entropy loss by hand: class weights, ignore_index, reductions, label smoothing.

The classification loss every training loop uses, written from ``log_softmax``
and equal to ``torch.nn.functional.cross_entropy`` for class-index targets,
including the way it combines class weights with label smoothing.
"""

from __future__ import annotations

import torch


def cross_entropy(logits: torch.Tensor, target: torch.Tensor, weight: torch.Tensor | None = None,
                  ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> torch.Tensor:
    """Return the cross-entropy of ``logits`` against class indices ``target``.

    Shapes:
        ``logits`` is ``(N, C)`` or ``(N, C, d1, ..., dk)``: the classes are dim 1,
        NOT the last dim. ``target`` is an int64 tensor ``(N,)`` or ``(N, d1, ..., dk)``
        of class indices in ``[0, C)`` (or ``ignore_index``). ``weight``, when given, is
        a ``(C,)`` tensor of class weights. The result has the logits' dtype and device:
        shape ``target.shape`` for ``reduction="none"``, a 0-d tensor otherwise.

    Spec, per position ``i`` (a sample, or a sample and a spatial position), with
    ``logp = log_softmax(logits)`` over dim 1, ``w = weight`` (all ones if None),
    ``eps = label_smoothing`` and ``y = target[i]``:
        ``loss[i] = (1 - eps) * w[y] * (-logp[i, y])
                    + eps / C * sum_c w[c] * (-logp[i, c])``
        - Positions where ``target == ignore_index`` get ``loss[i] = 0`` and count for
          nothing below (ignore_index may also be a real class, e.g. 0).
        - ``"none"``: the per-position losses. ``"sum"``: their sum.
          ``"mean"``: their sum divided by ``sum of w[y]`` over the positions not
          ignored: a WEIGHTED mean, not a division by N. When nothing is left
          (all ignored, or N == 0) that is 0 / 0 = nan, as in PyTorch.
        - Raise ``IndexError`` if a target that is not ``ignore_index`` is outside
          ``[0, C)``.
        - Keep it differentiable with respect to ``logits``.

    Example:
        >>> logits = torch.tensor([[2., 0., -1.], [0.5, 0.5, 3.]])
        >>> target = torch.tensor([0, 2])
        >>> cross_entropy(logits, target, reduction="none")
        tensor([0.1698, 0.1520])
        >>> cross_entropy(logits, target)                          # (0.1698 + 0.1520) / 2
        tensor(0.1609)
        >>> cross_entropy(logits, torch.tensor([0, -100]))        # the second is ignored
        tensor(0.1698)
        >>> cross_entropy(logits, target, weight=torch.tensor([1., 1., 3.]))
        tensor(0.1565)                                      # (0.1698 + 3 * 0.1520) / (1 + 3)
        >>> cross_entropy(logits, target, label_smoothing=0.1)
        tensor(0.3276)

    Pitfalls the notes warn about:
        - ``softmax(...).log()`` or ``exp / exp.sum()`` overflow and underflow for large
          logits (a logit of 1000 gives inf and nan): use ``log_softmax`` (or subtract
          the max, or ``torch.logsumexp``).
        - The mean with class weights divides by the sum of the weights of the targets,
          and ignored positions are left out of both the sum and the divisor.
        - Label smoothing spreads ``eps`` over ALL C classes (the target included), not
          over the C - 1 others; with class weights, the smoothing term is weighted too.
        - For ``(N, C, d1, ...)`` inputs the class dim is 1: softmax over dim -1 is wrong.

    Forbidden: ``F.cross_entropy``, ``F.nll_loss``, ``nn.CrossEntropyLoss`` and
    ``nn.NLLLoss``: use ``log_softmax(dim=1)``, ``gather`` (or indexing), sums and means.
    """
    raise NotImplementedError
