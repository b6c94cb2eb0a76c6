"""Do-nothing: answers of the right type with constant content: the scalar shape, zero strides."""


def broadcast_shape(*shapes):
    return ()


def broadcast_strides(size, stride, target_shape):
    return (0,) * len(target_shape)
