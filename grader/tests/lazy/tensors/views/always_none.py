"""Do-nothing: "no view exists" for every shape, inside the spec's checks (a shape that does
not fit raises ValueError)."""


def _fits(size, shape):
    count = 1
    for n in size:
        count *= n
    known = 1
    for n in shape:
        if n != -1:
            known *= n
    if list(shape).count(-1) > 1 or any(n < -1 for n in shape):
        raise ValueError("bad shape")
    if -1 in shape:
        if known == 0 or count % known:
            raise ValueError("bad shape")
    elif known != count:
        raise ValueError("bad shape")


def view_strides(size, stride, shape):
    if len(size) != len(stride) or any(n < 0 for n in size):
        raise ValueError("bad layout")
    _fits(size, shape)
    return None


def permute_strides(size, stride, dims):
    raise ValueError("no")


def squeeze_strides(size, stride, dim):
    raise ValueError("no")
