"""Do-nothing: returns x as it came."""


def pool2d(x, kernel, stride=None, padding=0, mode="max"):
    return x
