"""Do-nothing: returns the longest shape given, and the target shape as the strides."""


def broadcast_shape(*shapes):
    return tuple(max(shapes, key=len)) if shapes else ()


def broadcast_strides(size, stride, target_shape):
    return tuple(target_shape)
