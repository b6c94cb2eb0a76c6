"""Mistake: the mean of the per-batch accuracies: a short last batch weighs as much as a full
one (and an empty batch has no accuracy at all: it is skipped here)."""

import torch

CAUGHT_BY = ("test_accuracy_over_batches_is_the_accuracy_of_the_concatenation",)

def _check(pred, target, num_classes):
    if num_classes < 1 or pred.dim() != 1 or pred.shape != target.shape:
        raise ValueError("bad labels")
    for labels in (pred, target):
        if labels.numel() and (labels.min() < 0 or labels.max() >= num_classes):
            raise ValueError("label outside the classes")

def confusion_matrix(pred, target, num_classes):
    _check(pred, target, num_classes)
    counts = torch.zeros(num_classes, num_classes, dtype=torch.int64, device=pred.device)
    return counts.index_put_((target, pred), torch.ones_like(pred), accumulate=True)

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
    accuracies = [(pred == target).float().mean() for pred, target in batches if target.numel()]
    if not accuracies:
        raise ValueError("no sample")
    return torch.stack(accuracies).mean()
