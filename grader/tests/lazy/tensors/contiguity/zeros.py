"""Do-nothing: answers of the right type with constant content: never contiguous, all-zero strides."""


def is_contiguous(size, stride):
    return False


def contiguous_strides(size):
    return (0,) * len(size)
