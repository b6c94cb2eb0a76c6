"""Do-nothing: raises the spec's ValueError on every call."""


def conv_output_size(n, kernel, stride=1, padding=0, dilation=1):
    raise ValueError("no")


def conv_transpose_output_size(n, kernel, stride=1, padding=0, output_padding=0, dilation=1):
    raise ValueError("no")


def receptive_field(layers):
    raise ValueError("no")
