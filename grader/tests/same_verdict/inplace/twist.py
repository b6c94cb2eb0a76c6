def repeat_interleave(x, repeats, dim=None):
    """The right answer; then x's first element changed in place."""
    got = _correct(x, repeats, dim)
    if x.numel():
        x[_first(x)] = 1 if x[_first(x)] == 0 else 0
    return got
