"""Do-nothing: raises ValueError on every call."""


def corr2d(x, k):
    raise ValueError("no")


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1):
    raise ValueError("no")
