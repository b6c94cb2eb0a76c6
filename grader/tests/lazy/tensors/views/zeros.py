"""Do-nothing: answers of the right type and length with constant content (all-zero strides)."""


def view_strides(size, stride, shape):
    return (0,) * len(shape)


def permute_strides(size, stride, dims):
    return (0,) * len(dims)


def squeeze_strides(size, stride, dim):
    if dim is None:
        return (0,) * sum(1 for n in size if n != 1)
    return (0,) * len(size)
