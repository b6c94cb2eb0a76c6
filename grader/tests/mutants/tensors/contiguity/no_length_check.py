"""Mistake: no ValueError when size and stride differ in length (zip silently truncates)."""

CAUGHT_BY = ('test_length_mismatch_raises_value_error',)


def _check_sizes(size):
    for n in size:
        if n < 0:
            raise ValueError(f"negative size in {size}")


def is_contiguous(size, stride):
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
    return tuple(reversed(strides))
