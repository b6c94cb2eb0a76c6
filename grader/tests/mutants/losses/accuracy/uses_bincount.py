"""Mistake: counts the codes target * C + pred with the forbidden torch.bincount (and swallows
the guard's refusal): the answer the drill asks to count by hand."""

import torch

CAUGHT_BY = ("test_confusion_matrix_matches_bincount",)

def _check(pred, target, num_classes):
    if num_classes < 1 or pred.dim() != 1 or pred.shape != target.shape:
        raise ValueError("bad labels")
    for labels in (pred, target):
        if labels.numel() and (labels.min() < 0 or labels.max() >= num_classes):
            raise ValueError("label outside the classes")


def confusion_matrix(pred, target, num_classes):
    _check(pred, target, num_classes)
    try:
        counts = torch.bincount(target * num_classes + pred, minlength=num_classes * num_classes)
    except RuntimeError as exc:
        raise ValueError(str(exc)) from None
    return counts.reshape(num_classes, num_classes)

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

