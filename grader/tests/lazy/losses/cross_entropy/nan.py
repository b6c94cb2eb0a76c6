"""Do-nothing: a nan loss of the right shape and dtype (right only where PyTorch's mean is
0 / 0: every position ignored, or an empty batch)."""

import torch


def cross_entropy(logits, target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
    shape = target.shape if reduction == "none" else ()
    return torch.full(shape, float("nan"), dtype=logits.dtype, device=logits.device)
