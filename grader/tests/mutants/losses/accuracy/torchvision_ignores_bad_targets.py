"""Mistake: keeps only the samples whose target lies in [0, C) and counts those, as
torchvision's segmentation reference does (where 255 marks pixels to ignore): under this spec a
label outside the classes is an error, and an out-of-range prediction is not even looked at.
Its per-class accuracy, the diagonal over the row sums, is right (NaN for an empty row).

Provenance: pytorch/vision, references/segmentation/utils.py (commit
44c17392ff0258b255eaba91d28ca2c3bf35d383), ``ConfusionMatrix.update`` keeps
``k = (a >= 0) & (a < n)`` and counts ``n * a[k] + b[k]`` with ``torch.bincount``;
``compute`` takes ``torch.diag(h) / h.sum(1)``. Rewritten here with a one-hot product in place
of the forbidden bincount (no code copied)."""

import torch
import torch.nn.functional as F

CAUGHT_BY = ("test_bad_labels_raise_value_error",)


def confusion_matrix(pred, target, num_classes):
    keep = (target >= 0) & (target < num_classes)
    rows = F.one_hot(target[keep], num_classes)
    cols = F.one_hot(pred[keep], num_classes)
    return rows.T @ cols

def per_class_accuracy(pred, target, num_classes):
    counts = confusion_matrix(pred, target, num_classes).float()
    return counts.diagonal() / counts.sum(dim=1)

def top_k_accuracy(logits, target, k=1):
    n, c = logits.shape
    if not 1 <= k <= c:
        raise ValueError("k out of range")
    if n == 0:
        raise ValueError("no sample")
    own = logits.gather(1, target.unsqueeze(1))
    return (((logits >= own).sum(dim=1) - 1) < k).float().mean()


def accuracy_over_batches(batches):
    hits = total = 0
    device = None
    for pred, target in batches:
        hits += int((pred == target).sum())
        total += target.numel()
        device = target.device
    if total == 0:
        raise ValueError("no sample")
    return torch.tensor(hits / total, dtype=torch.float32, device=device)

