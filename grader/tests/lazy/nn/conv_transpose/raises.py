"""Do-nothing: raises ValueError on every call."""


def conv_transpose2d(x, weight, bias=None, stride=1, padding=0):
    raise ValueError("no")
