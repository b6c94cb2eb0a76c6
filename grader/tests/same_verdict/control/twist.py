def repeat_interleave(x, repeats, dim=None):
    return _correct(x, repeats, dim)
