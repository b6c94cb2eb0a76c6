"""Reference solution: broadcast shapes and expanded strides from the numbers."""


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape all ``shapes`` broadcast to (aligned on the last dim)."""
    for shape in shapes:
        if any(n < 0 for n in shape):
            raise ValueError(f"sizes must be non-negative, got {tuple(shape)}")
    ndim = max((len(shape) for shape in shapes), default=0)
    result = []
    for d in range(-ndim, 0):
        size = 1
        for shape in shapes:
            n = shape[d] if len(shape) >= -d else 1
            if n == 1 or n == size:
                continue
            if size != 1:
                listed = " and ".join(str(tuple(s)) for s in shapes)
                raise ValueError(f"shapes {listed} do not broadcast: size {size} vs {n} at dim {d}")
            size = n
        result.append(size)
    return tuple(result)


def broadcast_strides(size: tuple[int, ...], stride: tuple[int, ...],
                      target_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The strides of ``x.expand(target_shape)``: 0 on stretched dims.

    Walks the result from its last dim, as torch's ``inferExpandGeometry`` does: a
    new leading dim is a size-1 dim whose stride is size x stride of the result dim
    to its right (0 if none), so it keeps that stride only when its target is 1.
    """
    if len(size) != len(stride):
        raise ValueError(f"size {tuple(size)} and stride {tuple(stride)} differ in length")
    lead = len(target_shape) - len(size)
    if lead < 0:
        raise ValueError(f"cannot expand size {tuple(size)} to fewer dims {tuple(target_shape)}")
    strides: list[int] = []
    for i in reversed(range(len(target_shape))):
        if i >= lead:
            n, s = size[i - lead], stride[i - lead]
        else:
            n, s = 1, target_shape[i + 1] * strides[0] if strides else 0
        if n != target_shape[i]:
            if n != 1:
                raise ValueError(f"cannot expand size {tuple(size)} to {tuple(target_shape)}: "
                                 f"size {n} is not 1 and differs from {target_shape[i]}")
            s = 0
        strides.insert(0, s)
    return tuple(strides)
