"""Attack: torch's own decomposition of ``aten::one_hot``, a plain Python function
(``torch._decomp.decompositions.one_hot``, registered with ``py_impl``): no
``F.one_hot`` and no dispatcher call to ``aten::one_hot``. Correct otherwise.
"""

import torch
import torch._decomp.decompositions as decompositions


def one_hot(labels, num_classes=-1):
    if labels.dtype.is_floating_point or labels.dtype == torch.bool:
        raise ValueError("one_hot needs integer labels")
    return decompositions.one_hot(labels.long(), num_classes)
