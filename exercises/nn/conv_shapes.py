"""Output sizes of convolutions and transposed convolutions, and receptive fields.

Before building a network you want its shapes on paper: how big the feature map
is after each layer, what a transposed convolution gives back, and how many
input positions one output of a stack of layers can see. All three answers are
plain integer arithmetic, one spatial dimension at a time; ``nn.Conv2d`` and
``nn.ConvTranspose2d`` apply the same formula to height and width separately.
"""


def conv_output_size(n: int, kernel: int, stride: int = 1, padding: int = 0,
                     dilation: int = 1) -> int:
    """Return the length of a convolution's output along one spatial dimension.

    Spec:
        - ``n >= 1`` input positions; ``padding >= 0`` zeros are added on BOTH sides;
          the kernel's ``kernel`` taps sit ``dilation`` apart, so it spans
          ``dilation * (kernel - 1) + 1`` positions; it moves ``stride`` at a time
          and only counts where it fits entirely inside the padded input.
        - Return a Python ``int``, exactly what ``nn.Conv2d`` gives.
        - Raise ``ValueError`` when the kernel does not fit even once (the padded
          input is shorter than the kernel's span): ``nn.Conv2d`` raises there too.

    Example:
        >>> conv_output_size(7, kernel=3)              # 7 - 3 + 1
        5
        >>> conv_output_size(7, kernel=3, stride=2, padding=1)
        4
        >>> conv_output_size(7, kernel=3, dilation=2)  # the kernel spans 5
        3

    How: count the positions left for the kernel's start in the padded input,
    divide by the stride rounding down, and add one for the first placement.

    Pitfalls the notes warn about:
        - Padding goes on both sides: it adds ``2 * padding``.
        - ``/`` gives a float; the division rounds down (``//``), and the result is
          an ``int``.

    Pitfall:
        - Dilation widens the span to ``dilation * (kernel - 1) + 1``, not
          ``dilation * kernel``.
    """
    raise NotImplementedError


def conv_transpose_output_size(n: int, kernel: int, stride: int = 1, padding: int = 0,
                               output_padding: int = 0, dilation: int = 1) -> int:
    """Return the length of a transposed convolution's output along one dimension.

    Spec:
        - A transposed convolution maps the shape back the other way: each of the
          ``n`` inputs lands ``stride`` apart, the (dilated) kernel spreads over its
          span from there, then ``padding`` is removed from BOTH ends and
          ``output_padding`` extra positions are added at one end.
        - Return a Python ``int``, exactly what ``nn.ConvTranspose2d`` gives.
        - Raise ``ValueError`` when ``output_padding`` is at least ``stride`` AND at
          least ``dilation`` (``output_padding >= max(stride, dilation)``: PyTorch
          refuses it; its message says "smaller than either stride or dilation",
          meaning below one of them is enough), or when the output would have fewer
          than 1 position. ``output_padding=2`` with ``stride=1, dilation=3`` is fine.

    Example:
        >>> conv_transpose_output_size(4, kernel=3, stride=2, padding=1)
        7
        >>> conv_transpose_output_size(4, kernel=3, stride=2, padding=1, output_padding=1)
        8

    Why output_padding: a convolution with stride 2 maps both 7 and 8 inputs to 4
    outputs; ``output_padding`` says which of them the transposed convolution
    should give back. With the same ``kernel, stride, padding, dilation``,
    ``conv_transpose_output_size(conv_output_size(n, ...), ..., output_padding=r)``
    is ``n`` for the right ``r`` in ``0 .. stride - 1``.

    Pitfall the notes warn about:
        - ``(n - 1) * stride``, not ``n * stride``: n inputs have n - 1 gaps.

    Where the notes fall short:
        - Forgetting ``output_padding`` or the dilation of the kernel's span: the
          notes' formula, ``(n - 1) * s - 2p + k``, has neither.

    Pitfall:
        - Refusing ``output_padding >= stride`` alone: a larger dilation allows it.
    """
    raise NotImplementedError


def receptive_field(layers: list[tuple[int, int]]) -> int:
    """Return how many consecutive input positions one output of a stack of layers sees.

    Spec:
        - ``layers`` is a list of ``(kernel, stride)`` pairs, first layer first, one
          spatial dimension (no padding, no dilation). ``[]`` sees 1 position.
        - The receptive field is the span from the first to the last input
          position that reaches a single output of the last layer (gaps included:
          when a stride is larger than the kernel, some positions inside the span
          do not contribute, and still count).
        - Return a Python ``int``.

    Example:
        >>> receptive_field([(3, 1), (3, 1)])   # two 3-wide layers: 3 + 2
        5
        >>> receptive_field([(2, 2), (3, 1)])   # the second layer's taps sit 2 apart
        6

    How: walk the layers from the first, keeping the distance in input positions
    between two neighbouring positions of the current layer's input ("jump",
    starting at 1). A layer with kernel k widens the field by ``(k - 1) * jump``,
    and then its stride multiplies the jump.

    Pitfalls:
        - The widening of a layer uses the jump of the layers BEFORE it: multiply
          by its own stride only afterwards.
        - Adding kernels or multiplying them ignores the strides.
    """
    raise NotImplementedError
