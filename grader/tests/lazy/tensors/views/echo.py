"""Do-nothing: hands the strides it was given back (the shape asked for, for view)."""


def view_strides(size, stride, shape):
    return tuple(shape)


def permute_strides(size, stride, dims):
    return tuple(stride)


def squeeze_strides(size, stride, dim):
    return tuple(stride)
