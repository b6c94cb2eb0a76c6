"""Do-nothing: returns x as it came."""


def corr2d(x, k):
    return x


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1):
    return x
