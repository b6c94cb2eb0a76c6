"""Reference solution: one-hot encoding with ``scatter_``."""

import torch


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
    return out.scatter_(-1, labels.unsqueeze(-1), 1)
