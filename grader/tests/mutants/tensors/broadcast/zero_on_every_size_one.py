"""Mistake: gives stride 0 to every size-1 dim and every new leading dim, even those that
stay size 1 (expand only zeroes the dims it stretches)."""

CAUGHT_BY = ("test_size_one_dims_that_stay_size_one_keep_their_stride",
             "test_new_size_one_dims_get_the_unsqueeze_stride", "test_strides_match_expand")


def broadcast_shape(*shapes):
    for shape in shapes:
        if any(n < 0 for n in shape):
            raise ValueError(f"negative size in {shape}")
    ndim = max((len(s) for s in shapes), default=0)
    result = []
    for d in range(-ndim, 0):
        size = 1
        for shape in shapes:
            n = shape[d] if len(shape) >= -d else 1
            if n == 1 or n == size:
                continue
            if size != 1:
                raise ValueError(f"size {size} vs {n} at dim {d}")
            size = n
        result.append(size)
    return tuple(result)


def broadcast_strides(size, stride, target_shape):
    lead = len(target_shape) - len(size)
    if lead < 0:
        raise ValueError("cannot expand to fewer dims")
    strides = [0] * lead
    for n, s, t in zip(size, stride, target_shape[lead:]):
        if n == 1:
            strides.append(0)
        elif n == t:
            strides.append(s)
        else:
            raise ValueError(f"size {n} cannot expand to {t}")
    return tuple(strides)
