"""Do-nothing: echoes its input (the strides as the answer; the sizes as the strides)."""


def is_contiguous(size, stride):
    return stride


def contiguous_strides(size):
    return tuple(size)
