"""Mistake: aligns the shapes on their FIRST dim (pads shorter shapes with 1s on the
right), so (3,) and (3, 1) give (3, 1) instead of (3, 3); expand is aligned the same way."""

CAUGHT_BY = ("test_shape_matches_torch", "test_strides_match_expand")


def broadcast_shape(*shapes):
    ndim = max((len(s) for s in shapes), default=0)
    result = []
    for d in range(ndim):
        size = 1
        for shape in shapes:
            n = shape[d] if d < len(shape) else 1
            if n < 0:
                raise ValueError(f"negative size in {shape}")
            if n == 1 or n == size:
                continue
            if size != 1:
                raise ValueError(f"size {size} vs {n} at dim {d}")
            size = n
        result.append(size)
    return tuple(result)


def broadcast_strides(size, stride, target_shape):
    if len(target_shape) < len(size):
        raise ValueError("cannot expand to fewer dims")
    strides = []
    for d, t in enumerate(target_shape):
        n, s = (size[d], stride[d]) if d < len(size) else (1, 0)
        if n == t:
            strides.append(s)
        elif n == 1:
            strides.append(0)
        else:
            raise ValueError(f"size {n} cannot expand to {t}")
    return tuple(strides)
