"""Right, written otherwise: the confusion matrix as a product of one-hots (target one-hot
transposed times pred one-hot), recall with the empty rows set to nan by torch.where, and top-k
from torch.topk's VALUES, which are unambiguous even where its indices are not: with the
(k + 1)-th largest logit as a threshold, a target counts when its logit is strictly above it
(then at most k logits, its own included, are at or above it). The batches' hits and samples
are summed as tensors."""

import torch
import torch.nn.functional as F


def _check(pred, target, num_classes):
    if num_classes < 1:
        raise ValueError("no class")
    if pred.shape != target.shape or pred.dim() != 1:
        raise ValueError("pred and target must be 1-D of one length")
    if pred.numel():
        low = min(int(pred.min()), int(target.min()))
        high = max(int(pred.max()), int(target.max()))
        if low < 0 or high >= num_classes:
            raise ValueError("label outside [0, num_classes)")


def confusion_matrix(pred, target, num_classes):
    _check(pred, target, num_classes)
    rows = F.one_hot(target, num_classes)
    cols = F.one_hot(pred, num_classes)
    return rows.T @ cols


def per_class_accuracy(pred, target, num_classes):
    counts = confusion_matrix(pred, target, num_classes).double()
    samples = counts.sum(dim=1)
    recall = torch.where(samples > 0, counts.diagonal() / samples, torch.nan)
    return recall.float()


def top_k_accuracy(logits, target, k=1):
    n, c = logits.shape
    if n == 0 or not 1 <= k <= c:
        raise ValueError("need a sample and 1 <= k <= C")
    if k == c:
        return torch.ones((), device=logits.device)
    threshold = logits.topk(k + 1, dim=1).values[:, k]
    own = logits.gather(1, target.view(-1, 1)).view(-1)
    return (own > threshold).float().mean()


def accuracy_over_batches(batches):
    hits = sum(((p == t).sum() for p, t in batches), torch.tensor(0))
    samples = sum(t.numel() for _, t in batches)
    if samples == 0:
        raise ValueError("no sample to measure")
    return hits.float() / samples
