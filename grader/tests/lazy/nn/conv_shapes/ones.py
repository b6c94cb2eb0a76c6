"""Do-nothing: always 1 (the receptive field of no layers, one output position)."""


def conv_output_size(n, kernel, stride=1, padding=0, dilation=1):
    return 1


def conv_transpose_output_size(n, kernel, stride=1, padding=0, output_padding=0, dilation=1):
    return 1


def receptive_field(layers):
    return 1
