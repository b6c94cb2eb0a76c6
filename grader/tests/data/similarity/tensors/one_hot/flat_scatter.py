"""An independent correct one_hot: validation first, then a flat scatter and a reshape."""

import torch


def one_hot(labels, num_classes=-1):
    if labels.dtype not in (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8):
        raise ValueError("one_hot needs integer labels, got " + str(labels.dtype))
    flat = labels.reshape(-1).to(torch.int64)
    count = flat.numel()
    if count > 0 and bool((flat < 0).any()):
        raise ValueError("a label is negative")
    if num_classes == -1:
        if count == 0:
            raise ValueError("an empty tensor gives no class count")
        num_classes = int(flat.max().item()) + 1
    if count > 0 and int(flat.max().item()) >= num_classes:
        raise ValueError("a label does not fit in num_classes")
    table = torch.zeros((count, num_classes), dtype=torch.int64)
    table.scatter_(1, flat.view(count, 1), torch.ones((count, 1), dtype=torch.int64))
    return table.reshape(tuple(labels.shape) + (num_classes,))
