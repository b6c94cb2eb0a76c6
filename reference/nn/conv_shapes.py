"""Reference solution: convolution output sizes and receptive fields."""


def _span(kernel: int, dilation: int) -> int:
    """Positions covered by a kernel whose taps sit ``dilation`` apart."""
    return dilation * (kernel - 1) + 1


def conv_output_size(n: int, kernel: int, stride: int = 1, padding: int = 0,
                     dilation: int = 1) -> int:
    """``floor((n + 2p - span) / stride) + 1``; ValueError when the kernel never fits."""
    room = n + 2 * padding - _span(kernel, dilation)
    if room < 0:
        raise ValueError(f"the kernel spans {_span(kernel, dilation)} positions but the padded "
                         f"input has only {n + 2 * padding}")
    return room // stride + 1


def conv_transpose_output_size(n: int, kernel: int, stride: int = 1, padding: int = 0,
                               output_padding: int = 0, dilation: int = 1) -> int:
    """``(n - 1) * stride - 2p + span + output_padding``, as nn.ConvTranspose2d; ValueError when
    output_padding is at least both stride and dilation, or no output is left."""
    if output_padding >= stride and output_padding >= dilation:
        raise ValueError(f"output_padding {output_padding} must be smaller than stride "
                         f"{stride} or dilation {dilation}")
    size = (n - 1) * stride - 2 * padding + _span(kernel, dilation) + output_padding
    if size < 1:
        raise ValueError(f"the output would have {size} positions")
    return size


def receptive_field(layers: list[tuple[int, int]]) -> int:
    """Span of input positions behind one output of the stacked (kernel, stride) layers."""
    field, jump = 1, 1
    for kernel, stride in layers:
        field += (kernel - 1) * jump
        jump *= stride
    return field
