"""Do-nothing: a loss of the right shape and dtype (target's shape for "none", 0-d
otherwise), on the logits' device, that is always 0."""

import torch


def cross_entropy(logits, target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
    shape = target.shape if reduction == "none" else ()
    return torch.zeros(shape, dtype=logits.dtype, device=logits.device)
