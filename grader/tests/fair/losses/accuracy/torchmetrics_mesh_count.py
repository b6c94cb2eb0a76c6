"""Right, written otherwise: the codes target * C + pred are counted against a mesh of every
code (an arange repeated once per sample), compared with ==, and summed per code, the way
torchmetrics counts where torch.bincount is unavailable; the labels are checked first, so no
code can stray into another row. Top-k counts the classes strictly above the target and its
ties apart; the batches are concatenated and compared once.

Provenance: Lightning-AI/torchmetrics, src/torchmetrics/utilities/data.py (commit
0427baa1fe63e6361b973ef65b54ac53cf13de3b): ``_bincount``, in deterministic mode (and on MPS and
XLA), builds ``torch.arange(minlength).repeat(len(x), 1)`` and sums ``torch.eq`` of it with
``x.reshape(-1, 1)`` over dim 0; its multiclass confusion matrix counts
``target * num_classes + preds`` that way. Rewritten here (no code copied)."""

from __future__ import annotations

import torch


def _validate(pred: torch.Tensor, target: torch.Tensor, num_classes: int) -> None:
    if num_classes <= 0:
        raise ValueError("num_classes must be positive")
    if pred.ndim != 1 or target.ndim != 1 or len(pred) != len(target):
        raise ValueError("pred and target must be 1-D and of equal length")
    both = torch.cat([pred, target])
    if ((both < 0) | (both >= num_classes)).any():
        raise ValueError("a label is not a class index")


def _count(codes: torch.Tensor, length: int) -> torch.Tensor:
    mesh = torch.arange(length, device=codes.device).repeat(len(codes), 1)
    return torch.eq(codes.reshape(-1, 1), mesh).sum(dim=0)


def confusion_matrix(pred: torch.Tensor, target: torch.Tensor, num_classes: int) -> torch.Tensor:
    _validate(pred, target, num_classes)
    return _count(target * num_classes + pred, num_classes * num_classes).view(num_classes, num_classes)


def per_class_accuracy(pred: torch.Tensor, target: torch.Tensor, num_classes: int) -> torch.Tensor:
    counts = confusion_matrix(pred, target, num_classes)
    hits, samples = torch.diag(counts), counts.sum(dim=1)
    nan = torch.full((num_classes,), float("nan"), device=pred.device)
    return torch.where(samples > 0, hits.float() / samples.clamp(min=1).float(), nan)


def top_k_accuracy(logits: torch.Tensor, target: torch.Tensor, k: int = 1) -> torch.Tensor:
    if logits.shape[0] == 0:
        raise ValueError("no sample")
    if k < 1 or k > logits.shape[1]:
        raise ValueError("k must lie in [1, C]")
    own = logits[torch.arange(len(target), device=logits.device), target].unsqueeze(1)
    above = (logits > own).sum(dim=1)
    tied = (logits == own).sum(dim=1) - 1
    return (above + tied < k).float().mean()


def accuracy_over_batches(batches: list[tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
    if not batches:
        raise ValueError("no batch")
    pred = torch.cat([p for p, _ in batches])
    target = torch.cat([t for _, t in batches])
    if target.numel() == 0:
        raise ValueError("no sample")
    return (pred == target).float().mean()
