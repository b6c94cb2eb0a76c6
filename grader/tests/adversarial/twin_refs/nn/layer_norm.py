"""Attack: torch's Python reference of layer norm, ``torch._refs.native_layer_norm``
(registered as the decomposition of ``aten::native_layer_norm``), in place of the
forbidden ``F.layer_norm``. Correct otherwise.
"""

import torch._refs as refs


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not shape or len(shape) > x.dim() or tuple(x.shape[x.dim() - len(shape):]) != shape:
        raise ValueError(f"normalized_shape {list(shape)} must be the last dims of an input "
                         f"of shape {list(x.shape)}")
    return refs.native_layer_norm(x, list(shape), weight, bias, eps)[0]
