"""Mistake: top-k from torch.topk's indices, as torchvision's classification reference computes
it: right where the logits are distinct, but among tied logits topk keeps whichever it keeps,
so a target tied with others is sometimes counted as a hit (the spec counts a tie against it).

Provenance: pytorch/vision, references/classification/utils.py (commit
041fe3bc301e2f5f8956b3f1abcd048a9745b23a), ``accuracy(output, target, topk=(1,))``:
``output.topk(maxk, 1, True, True)``, the indices compared with the target, the hits among the
first k summed and scaled to a percentage of the batch. Rewritten here for one k and a share
instead of a percentage (no code copied)."""

import torch

CAUGHT_BY = ("test_ties_count_against_the_target",)

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
    with torch.no_grad():
        _, best = logits.topk(k, 1, True, True)
        hits = best.eq(target.unsqueeze(1)).any(dim=1)
    return hits.sum(dtype=torch.float32) / n


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
