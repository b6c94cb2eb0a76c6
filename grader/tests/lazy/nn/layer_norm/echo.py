"""Do-nothing: returns x as it came."""


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    return x
