"""Do-nothing: raises on every call."""


def logsumexp(x, dim, keepdim=False):
    raise ValueError("no")


def clamp_ste(x, min, max):
    raise ValueError("no")
