"""Do-nothing: raises the spec's ValueError on every call."""


def broadcast_shape(*shapes):
    raise ValueError("sizes 0 1 2 3 4 5 clash")


def broadcast_strides(size, stride, target_shape):
    raise ValueError("no")
