"""Reference solution: a confusion matrix counted with index_put_ (accumulate), recall per class
from it (0 / 0 left as NaN), top-k by counting the classes at or above the target's logit, and
the accuracy of several batches from their summed counts."""

from __future__ import annotations

import torch


def _check_labels(pred: torch.Tensor, target: torch.Tensor, num_classes: int) -> None:
    if num_classes < 1:
        raise ValueError(f"num_classes must be at least 1, got {num_classes}")
    if pred.dim() != 1 or pred.shape != target.shape:
        raise ValueError(f"pred and target must be 1-D of one length, got shapes {list(pred.shape)} "
                         f"and {list(target.shape)}")
    for name, labels in (("pred", pred), ("target", target)):
        if labels.numel() and (int(labels.min()) < 0 or int(labels.max()) >= num_classes):
            raise ValueError(f"{name} holds a label outside [0, {num_classes})")


def confusion_matrix(pred: torch.Tensor, target: torch.Tensor, num_classes: int) -> torch.Tensor:
    """counts[i, j]: how many samples of class i were predicted as class j."""
    _check_labels(pred, target, num_classes)
    counts = torch.zeros(num_classes, num_classes, dtype=torch.int64, device=pred.device)
    ones = torch.ones(pred.shape, dtype=torch.int64, device=pred.device)
    counts.index_put_((target, pred), ones, accumulate=True)
    return counts


def per_class_accuracy(pred: torch.Tensor, target: torch.Tensor, num_classes: int) -> torch.Tensor:
    """The diagonal over the row sums, in float32: NaN for a class no sample belongs to."""
    counts = confusion_matrix(pred, target, num_classes).to(torch.float32)
    return counts.diagonal() / counts.sum(dim=1)


def top_k_accuracy(logits: torch.Tensor, target: torch.Tensor, k: int = 1) -> torch.Tensor:
    """The share of samples with fewer than k other classes at or above their target's logit."""
    n, c = logits.shape
    if not 1 <= k <= c:
        raise ValueError(f"k must be in [1, {c}], got {k}")
    if n == 0:
        raise ValueError("top-k accuracy of no sample")
    own = logits.gather(1, target.unsqueeze(1))
    ahead = (logits >= own).sum(dim=1) - 1  # the target itself is at or above its own logit
    return (ahead < k).to(torch.float32).mean()


def accuracy_over_batches(batches: list[tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
    """All hits over all samples: counts summed across the batches, divided once."""
    total = sum(target.numel() for _, target in batches)
    if total == 0:
        raise ValueError("accuracy of no sample")
    hits = torch.stack([(pred == target).sum() for pred, target in batches]).sum()
    return hits.to(torch.float32) / total
