"""Do-nothing: returns x as it came."""


def repeat_interleave(x, repeats, dim=None):
    return x
