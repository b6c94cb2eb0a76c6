"""Attack: the weighted negative log-likelihood from torch's Python reference,
``torch._refs.nn.functional.nll_loss``, in place of the forbidden ``F.nll_loss``;
the rest as the reference solution does it. Correct otherwise.
"""

import torch
import torch._refs.nn.functional as ref_functional


def cross_entropy(logits, target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction!r} is not a valid value for reduction")
    classes = logits.shape[1]
    keep = target != ignore_index
    bad = keep & ((target < 0) | (target >= classes))
    if bool(bad.any()):
        raise IndexError(f"Target {int(target[bad][0])} is out of bounds.")
    if weight is None:
        weight = torch.ones(classes, dtype=logits.dtype, device=logits.device)
    log_p = logits.log_softmax(dim=1)
    safe = torch.where(keep, target, torch.zeros_like(target))
    targeted = ref_functional.nll_loss(log_p, target, weight, ignore_index=ignore_index,
                                       reduction="none")
    target_weight = weight[safe] * keep
    per_class = weight.view(1, classes, *([1] * (logits.dim() - 2)))
    uniform = -(log_p * per_class).sum(dim=1) / classes * keep
    if reduction == "mean":
        total = target_weight.sum()
        return (1 - label_smoothing) * (targeted.sum() / total) + label_smoothing * (uniform.sum() / total)
    loss = (1 - label_smoothing) * targeted + label_smoothing * uniform
    return loss if reduction == "none" else loss.sum()
