"""Reference solution: row-major contiguity from sizes and strides."""


def _check_sizes(size: tuple[int, ...]) -> None:
    for n in size:
        if n < 0:
            raise ValueError(f"sizes must be non-negative, got {tuple(size)}")


def is_contiguous(size: tuple[int, ...], stride: tuple[int, ...]) -> bool:
    """True when a tensor of this size and stride is row-major contiguous."""
    if len(size) != len(stride):
        raise ValueError(f"size {tuple(size)} and stride {tuple(stride)} differ in length")
    _check_sizes(size)
    if 0 in size:  # no elements: nothing to lay out
        return True
    expected = 1
    for n, s in zip(reversed(size), reversed(stride)):
        if n == 1:  # never stepped along
            continue
        if s != expected:
            return False
        expected *= n
    return True


def contiguous_strides(size: tuple[int, ...]) -> tuple[int, ...]:
    """The strides of ``torch.empty(size)`` (size-0 dims count as 1)."""
    _check_sizes(size)
    strides, step = [], 1
    for n in reversed(size):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))
