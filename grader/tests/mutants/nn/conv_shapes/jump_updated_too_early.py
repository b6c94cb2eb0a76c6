"""Mistake: receptive_field multiplies the jump by a layer's own stride before widening
the field with that layer's kernel."""

CAUGHT_BY = ("test_receptive_field_matches_conv_stack_gradient",)


def conv_output_size(n, kernel, stride=1, padding=0, dilation=1):
    room = n + 2 * padding - dilation * (kernel - 1) - 1
    if room < 0:
        raise ValueError("the kernel does not fit")
    return room // stride + 1


def conv_transpose_output_size(n, kernel, stride=1, padding=0, output_padding=0, dilation=1):
    if output_padding >= stride and output_padding >= dilation:
        raise ValueError("output_padding must be smaller than stride or dilation")
    size = (n - 1) * stride - 2 * padding + dilation * (kernel - 1) + 1 + output_padding
    if size < 1:
        raise ValueError("empty output")
    return size


def receptive_field(layers):
    field, jump = 1, 1
    for kernel, stride in layers:
        jump *= stride
        field += (kernel - 1) * jump
    return field
