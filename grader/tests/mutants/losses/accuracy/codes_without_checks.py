"""Mistake: counts the codes target * C + pred (against an arange of every code, as
torchmetrics' fallback counts) without checking the labels first: a prediction equal to C lands
in the next row, a negative one in the row before, and a code past the last one is dropped: no
error, a wrong matrix."""

import torch

CAUGHT_BY = ("test_bad_labels_raise_value_error",)


def confusion_matrix(pred, target, num_classes):
    if pred.shape != target.shape:
        raise ValueError("pred and target differ in shape")
    codes = target * num_classes + pred
    every = torch.arange(num_classes * num_classes, device=pred.device)
    return (codes.unsqueeze(1) == every).sum(dim=0).reshape(num_classes, num_classes)

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

