"""Do-nothing: checks the targets as the spec says (IndexError for a target outside [0, C)
that is not ignore_index), then returns a zero loss of the right shape and dtype."""

import torch


def cross_entropy(logits, target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
    keep = target != ignore_index
    if bool((keep & ((target < 0) | (target >= logits.shape[1]))).any()):
        raise IndexError("Target is out of bounds.")
    shape = target.shape if reduction == "none" else ()
    return torch.zeros(shape, dtype=logits.dtype, device=logits.device)
