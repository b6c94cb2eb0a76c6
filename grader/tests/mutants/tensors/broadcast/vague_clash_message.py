"""Mistake: the clash raises ValueError("shapes do not broadcast") without saying which
sizes clash, so the reader cannot find the problem."""

CAUGHT_BY = ("test_clash_raises_value_error_naming_the_sizes",)


def broadcast_shape(*shapes):
    for shape in shapes:
        if any(n < 0 for n in shape):
            raise ValueError("negative size")
    ndim = max((len(s) for s in shapes), default=0)
    result = []
    for d in range(-ndim, 0):
        size = 1
        for shape in shapes:
            n = shape[d] if len(shape) >= -d else 1
            if n == 1 or n == size:
                continue
            if size != 1:
                raise ValueError("shapes do not broadcast")
            size = n
        result.append(size)
    return tuple(result)


def broadcast_strides(size, stride, target_shape):
    lead = len(target_shape) - len(size)
    if lead < 0:
        raise ValueError("cannot expand to fewer dims")
    strides = []
    for i in reversed(range(len(target_shape))):
        n, s = (size[i - lead], stride[i - lead]) if i >= lead else (
            1, target_shape[i + 1] * strides[0] if strides else 0)
        if n != target_shape[i]:
            if n != 1:
                raise ValueError(f"size {n} cannot expand to {target_shape[i]}")
            s = 0
        strides.insert(0, s)
    return tuple(strides)
