"""An independent correct one_hot, written from the stub's docstring alone (never the
reference): the zeros tensor and the ``scatter_`` call the docstring describes."""

import torch


def one_hot(labels, num_classes=-1):
    if labels.dtype.is_floating_point or labels.dtype.is_complex or labels.dtype == torch.bool:
        raise ValueError(f"labels must be integers, not {labels.dtype}")
    index = labels.long()
    if index.numel() > 0 and index.min() < 0:
        raise ValueError("negative label")
    if num_classes == -1:
        if index.numel() == 0:
            raise ValueError("cannot infer num_classes from an empty tensor")
        num_classes = int(index.max()) + 1
    if index.numel() > 0 and index.max() >= num_classes:
        raise ValueError("label out of range for num_classes")
    out = torch.zeros(*labels.shape, num_classes, dtype=torch.int64, device=labels.device)
    return out.scatter_(-1, index.unsqueeze(-1), 1)
