"""An independent correct contiguity: compare with the strides a contiguous tensor would have."""


def contiguous_strides(size):
    if any(d < 0 for d in size):
        raise ValueError("negative size in " + repr(tuple(size)))
    out = [0] * len(size)
    running = 1
    i = len(size) - 1
    while i >= 0:
        out[i] = running
        running = running * (size[i] if size[i] > 0 else 1)
        i -= 1
    return tuple(out)


def is_contiguous(size, stride):
    if len(stride) != len(size):
        raise ValueError("size and stride lengths differ")
    wanted = contiguous_strides(size)
    if any(d == 0 for d in size):
        return True
    return all(d == 1 or s == w for d, s, w in zip(size, stride, wanted))
