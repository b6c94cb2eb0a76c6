"""Mistake: builds the index with labels.unsqueeze_(-1), in place: when labels are int64
already, labels.long() is the caller's tensor itself, so the call reshapes it to (*S, 1)
(found by automated mutation of the reference: issue 27)."""

import torch

CAUGHT_BY = ("test_labels_are_left_unchanged",)


def one_hot(labels: torch.Tensor, num_classes: int = -1) -> torch.Tensor:
    """``F.one_hot(labels, num_classes)`` built with ``scatter_``; labels in any memory layout."""
    if labels.dtype.is_floating_point or labels.dtype.is_complex or labels.dtype == torch.bool:
        raise ValueError(f"labels must have an integer dtype, got {labels.dtype}")
    labels = labels.long()
    if labels.numel() and labels.min() < 0:
        raise ValueError("labels must be non-negative")
    if num_classes == -1:
        if labels.numel() == 0:
            raise ValueError("cannot infer num_classes from an empty tensor")
        num_classes = int(labels.max()) + 1
    elif labels.numel() and labels.max() >= num_classes:
        raise ValueError(f"label {int(labels.max())} is out of range for {num_classes} classes")
    out = torch.zeros(*labels.shape, num_classes, dtype=torch.int64)
    return out.scatter_(-1, labels.unsqueeze_(-1), 1)
