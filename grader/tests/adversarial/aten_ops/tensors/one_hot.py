"""Attack: call the forbidden operator by its dispatcher name, ``torch.ops.aten.one_hot``.

No Python function named ``one_hot`` runs, so neither a profile hook nor a
``TorchFunctionMode`` watching ``torch.nn.functional`` sees it. Correct otherwise.
"""

import torch


def one_hot(labels, num_classes=-1):
    if labels.dtype.is_floating_point or labels.dtype == torch.bool:
        raise ValueError("one_hot needs integer labels")
    return torch.ops.aten.one_hot.default(labels.long(), num_classes)
