"""Do-nothing: hands the input back (x; the kernel size on both sides)."""


def same_padding(kernel_size, dilation=1):
    return (kernel_size, kernel_size)


def conv2d_groups(x, weight, bias, stride=1, padding=0, dilation=1, groups=1, *, padding_mode):
    return x
