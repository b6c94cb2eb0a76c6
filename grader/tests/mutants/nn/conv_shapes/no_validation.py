"""Mistake: no checks: returns the formula's value when the kernel does not fit or
output_padding is too large, where nn.Conv2d / nn.ConvTranspose2d raise."""

CAUGHT_BY = ("test_conv_output_size_raises_when_kernel_does_not_fit",
             "test_conv_transpose_output_size_raises_value_error")


def conv_output_size(n, kernel, stride=1, padding=0, dilation=1):
    return (n + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def conv_transpose_output_size(n, kernel, stride=1, padding=0, output_padding=0, dilation=1):
    return (n - 1) * stride - 2 * padding + dilation * (kernel - 1) + 1 + output_padding


def receptive_field(layers):
    field, jump = 1, 1
    for kernel, stride in layers:
        field += (kernel - 1) * jump
        jump *= stride
    return field
