"""Do-nothing: hands x back from both functions."""


def logsumexp(x, dim, keepdim=False):
    return x


def clamp_ste(x, min, max):
    return x
