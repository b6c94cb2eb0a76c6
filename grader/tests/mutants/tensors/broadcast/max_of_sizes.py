"""Mistake: takes the max of the sizes in each dim, so 0 broadcast with 1 gives 1 (torch
gives 0: size 0 is an ordinary size, only 1 stretches)."""

CAUGHT_BY = ("test_shape_matches_torch",)


def broadcast_shape(*shapes):
    for shape in shapes:
        if any(n < 0 for n in shape):
            raise ValueError(f"negative size in {shape}")
    ndim = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    result = []
    for d, sizes in enumerate(zip(*padded)):
        size = max(sizes)
        for n in sizes:
            if n not in (1, size):
                raise ValueError(f"size {n} vs {size} at dim {d - ndim}")
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
