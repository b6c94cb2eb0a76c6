def repeat_interleave(x, repeats, dim=None):
    """The right answer; then x's first element changed through ``x.data``."""
    got = _correct(x, repeats, dim)
    if x.numel():
        data = x.data
        data[_first(x)] = 1 if data[_first(x)] == 0 else 0
    return got
