"""Do-nothing: raises the spec's ValueError on every call."""


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    raise ValueError("no")
