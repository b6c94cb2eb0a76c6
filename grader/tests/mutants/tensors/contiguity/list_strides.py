"""Mistake: contiguous_strides returns a list instead of a tuple like Tensor.stride()."""

CAUGHT_BY = ('test_return_types',)


def _check_sizes(size):
    for n in size:
        if n < 0:
            raise ValueError(f"negative size in {size}")


def is_contiguous(size, stride):
    if len(size) != len(stride):
        raise ValueError("size and stride differ in length")
    _check_sizes(size)
    if 0 in size:
        return True
    expected = 1
    for n, s in zip(reversed(size), reversed(stride)):
        if n == 1:
            continue
        if s != expected:
            return False
        expected *= n
    return True


def contiguous_strides(size):
    _check_sizes(size)
    strides, step = [], 1
    for n in reversed(size):
        strides.append(step)
        step *= max(n, 1)
    return list(reversed(strides))
