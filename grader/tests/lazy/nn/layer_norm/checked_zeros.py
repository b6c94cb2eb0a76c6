"""Do-nothing with the spec's checks (empty or mismatched normalized_shape); otherwise
zeros of x's shape, attached to the graph of every input."""


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not shape or tuple(x.shape[x.dim() - len(shape):]) != shape or len(shape) > x.dim():
        raise ValueError("normalized_shape")
    out = x * 0
    if weight is not None:
        out = out + 0 * weight
    if bias is not None:
        out = out + 0 * bias
    return out
