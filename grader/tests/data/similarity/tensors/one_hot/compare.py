"""An independent correct one_hot, written from the stub's docstring alone (never the
reference): no scatter, every label compared with a row of class numbers."""

import torch

INTEGER = {torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64}


def one_hot(labels, num_classes=-1):
    if labels.dtype not in INTEGER:
        raise ValueError("one_hot: integer labels only")
    values = labels.to(torch.int64)
    empty = values.numel() == 0
    low = None if empty else int(values.min())
    high = None if empty else int(values.max())
    if low is not None and low < 0:
        raise ValueError(f"labels must be >= 0, found {low}")
    classes = num_classes
    if classes == -1:
        if high is None:
            raise ValueError("num_classes=-1 needs at least one label")
        classes = high + 1
    if high is not None and high >= classes:
        raise ValueError(f"label {high} needs more than {classes} classes")
    table = torch.arange(classes, device=labels.device)
    return (values[..., None] == table).to(torch.int64)
