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
        a ``(C,)`` tensor of class weights. Any of them may be non-contiguous (a transposed
        or strided view). The result has the logits' dtype (float16 and bfloat16 too) and
        device: shape ``target.shape`` for ``reduction="none"``, a 0-d tensor otherwise.

    Spec, per position ``i`` (a sample, or a sample and a spatial position), with
    ``logp = log_softmax(logits)`` over dim 1, ``w = weight`` (all ones if None),
    ``eps = label_smoothing`` and ``y = target[i]``:
        ``loss[i] = (1 - eps) * w[y] * (-logp[i, y])
                    + eps / C * sum_c w[c] * (-logp[i, c])``
        - Positions where ``target == ignore_index`` get ``loss[i] = 0`` and count for
          nothing below (ignore_index may also be a real class, e.g. 0).
        - ``"none"``: the per-position losses. ``"sum"``: their sum.
          ``"mean"``: a WEIGHTED mean, not a division by N. With ``W = sum of w[y]``
          over the positions not ignored, each of the two terms is divided by ``W``
          on its own, as PyTorch does:
              ``(1 - eps) * (sum_i w[y] * (-logp[i, y])) / W
                + eps / C * (sum_i sum_c w[c] * (-logp[i, c])) / W``
          (the same as ``sum of loss[i] / W`` while ``W > 0``). When ``W == 0``
          (all ignored, N == 0, or every kept target's class has weight 0) the
          first term is 0 / 0 = nan, so the mean is nan, as in PyTorch, even with
          label smoothing (dividing the summed loss by W once would give inf there).
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
        - For ``(N, C, d1, ...)`` inputs the class dim is 1: softmax over dim -1 is wrong.
        - ``.view(...)`` refuses many non-contiguous tensors (a transposed target, a
          sliced logits tensor): use ``reshape``, or index along dim 1 without flattening.

    Pitfalls:
        - ``softmax(...).log()`` or ``exp / exp.sum()`` overflow and underflow for large
          logits (a logit of 1000 gives inf and nan): use ``log_softmax`` (or subtract
          the max, or ``torch.logsumexp``).
        - The mean with class weights divides by the sum of the weights of the targets,
          and ignored positions are left out of both the sum and the divisor.
        - Label smoothing spreads ``eps`` over ALL C classes (the target included), not
          over the C - 1 others; with class weights, the smoothing term is weighted too.
        - Large logits with label smoothing: the smoothing term needs ``-logp`` of the
          LEAST likely classes too, which ``softmax(...).log()`` turns into ``-inf``.
        - Keep the logits' dtype: in float16 or bfloat16 return a float16 or bfloat16 loss
          (computing inside in float32 is fine; cast the result back).

    Forbidden: ``F.cross_entropy``, ``F.nll_loss``, ``nn.CrossEntropyLoss`` and
    ``nn.NLLLoss``: use ``log_softmax(dim=1)``, ``gather`` (or indexing), sums and means.
    """
    raise NotImplementedError
