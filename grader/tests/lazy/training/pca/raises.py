"""Do-nothing: raises the spec's exception (ValueError) on every call."""


def pca(x, k):
    raise ValueError("x must be 2-D and 1 <= k <= min(N, D)")
