"""Attack: step around a ``TorchFunctionMode`` guard with ``torch._C.DisableTorchFunction``.

Inside ``DisableTorchFunction()`` no torch-function mode sees a call, so a guard built
on one would miss ``F.one_hot`` (the drill forbids it). Answers correctly otherwise,
float and bool labels included, so only the guard stands between it and the points.
"""

import torch
import torch.nn.functional as F


def one_hot(labels, num_classes=-1):
    if labels.dtype.is_floating_point or labels.dtype == torch.bool:
        raise ValueError("one_hot needs integer labels")
    with torch._C.DisableTorchFunction():
        return F.one_hot(labels.long(), num_classes)
