def repeat_interleave(x, repeats, dim=None):
    """Every count 1: the answer equals x, so x is returned as a view of itself."""
    got = _correct(x, repeats, dim)
    if not _all_ones(repeats) or not x.numel() or x.dim() == 0:
        return got
    if dim is None:
        return x.reshape(-1)  # a view wherever the layout allows one
    if dim == 0:
        return x[:]
    if dim < 0:
        return x.expand(x.shape)
    return x.view(x.shape)
