"""Do-nothing: "always True" (contiguous), and all strides 1, of the right length."""


def is_contiguous(size, stride):
    return True


def contiguous_strides(size):
    return (1,) * len(size)
