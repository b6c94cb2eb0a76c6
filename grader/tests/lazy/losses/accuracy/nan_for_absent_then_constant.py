"""Do-nothing that knows the corner cases: nan exactly for the classes no sample belongs to
and 0.5 for every other one; the spec's errors; top-k 1 when k = C (always right then) and 0
otherwise; accuracy 0.5."""

import torch


def _check(pred, target, num_classes):
    if num_classes < 1 or pred.dim() != 1 or pred.shape != target.shape:
        raise ValueError("bad labels")
    for labels in (pred, target):
        if labels.numel() and (labels.min() < 0 or labels.max() >= num_classes):
            raise ValueError("label outside the classes")


def confusion_matrix(pred, target, num_classes):
    _check(pred, target, num_classes)
    return torch.zeros(num_classes, num_classes, dtype=torch.int64, device=pred.device)


def per_class_accuracy(pred, target, num_classes):
    _check(pred, target, num_classes)
    present = torch.tensor([bool((target == i).any()) for i in range(num_classes)])
    out = torch.full((num_classes,), 0.5, dtype=torch.float32)
    out[~present] = float("nan")
    return out.to(pred.device)


def top_k_accuracy(logits, target, k=1):
    n, c = logits.shape
    if not 1 <= k <= c or n == 0:
        raise ValueError("bad k or no sample")
    return torch.tensor(1.0 if k == c else 0.0, dtype=torch.float32, device=logits.device)


def accuracy_over_batches(batches):
    if sum(t.numel() for _, t in batches) == 0:
        raise ValueError("no sample")
    return torch.tensor(0.5, dtype=torch.float32)
