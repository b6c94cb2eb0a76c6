"""Do-nothing per function: logsumexp returns the max along dim (the right shape, attached,
close to the answer when one entry dominates); clamp_ste returns x itself, unclamped (the
right gradient, the wrong values)."""


def logsumexp(x, dim, keepdim=False):
    return x.amax(dim, keepdim=keepdim)


def clamp_ste(x, min, max):
    return x * 1
