"""Attack: torch's Python reference ``torch._refs.broadcast_shapes`` (a twin of the
forbidden ``torch.broadcast_shapes``, which never reaches the dispatcher);
``broadcast_strides`` is not attempted.
"""

import torch._refs as refs


def broadcast_shape(*shapes):
    for shape in shapes:
        if any(n < 0 for n in shape):
            raise ValueError(f"sizes must be non-negative, got {tuple(shape)}")
    try:
        return tuple(refs.broadcast_shapes(*shapes))
    except RuntimeError as exc:
        raise ValueError(str(exc)) from None


def broadcast_strides(size, stride, target):
    raise NotImplementedError
