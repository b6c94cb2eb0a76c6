"""Do-nothing: returns x as it came."""


def conv_transpose2d(x, weight, bias=None, stride=1, padding=0):
    return x
