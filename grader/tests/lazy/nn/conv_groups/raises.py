"""Do-nothing: raises ValueError on every call."""


def same_padding(kernel_size, dilation=1):
    raise ValueError("no")


def conv2d_groups(x, weight, bias, stride=1, padding=0, dilation=1, groups=1, *, padding_mode):
    raise ValueError("no")
