"""Mistake: output_padding is validated but never added to the transposed size."""

CAUGHT_BY = ("test_conv_transpose_output_size_matches_conv_transpose2d",
             "test_conv_transpose_undoes_conv_shape")


def conv_output_size(n, kernel, stride=1, padding=0, dilation=1):
    room = n + 2 * padding - dilation * (kernel - 1) - 1
    if room < 0:
        raise ValueError("the kernel does not fit")
    return room // stride + 1


def conv_transpose_output_size(n, kernel, stride=1, padding=0, output_padding=0, dilation=1):
    if output_padding >= stride and output_padding >= dilation:
        raise ValueError("output_padding must be smaller than stride or dilation")
    size = (n - 1) * stride - 2 * padding + dilation * (kernel - 1) + 1
    if size < 1:
        raise ValueError("empty output")
    return size


def receptive_field(layers):
    field, jump = 1, 1
    for kernel, stride in layers:
        field += (kernel - 1) * jump
        jump *= stride
    return field
