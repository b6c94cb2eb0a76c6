"""Transposed convolution, built from an ordinary one.

A transposed convolution ("deconvolution", the upsampling layer of decoders and
GAN generators) scatters every input pixel into the output: pixel ``x[i, j]``
adds ``x[i, j] * kernel`` to the output window at ``(i * stride, j * stride)``.
The same result comes out of a plain stride-1 convolution once the input is
spread out with zeros, padded, and the kernel is flipped: that is the recipe
this drill asks for, equal to ``torch.nn.functional.conv_transpose2d``.
"""

from __future__ import annotations

import torch


def conv_transpose2d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
                     stride: int | tuple[int, int] = 1,
                     padding: int | tuple[int, int] = 0) -> torch.Tensor:
    """Transposed 2-D convolution, equal to ``F.conv_transpose2d`` (no
    ``output_padding``, ``groups=1``, ``dilation=1``).

    Spec:
        - ``x``: ``(N, C_in, H, W)``; ``weight``: ``(C_in, C_out, kh, kw)`` (note:
          input channels FIRST, the layout ``nn.ConvTranspose2d`` stores);
          ``bias``: ``None`` or ``(C_out,)``.
        - ``stride`` and ``padding``: an int (both dims) or a pair
          ``(along H, along W)``, with ``0 <= padding <= k - 1`` per dim.
        - Output ``(N, C_out, H_out, W_out)``, dtype (float16 and bfloat16 included,
          on the CPU too) and device of ``x``, with
          ``H_out = (H - 1) * stride_h - 2 * pad_h + kh`` (the same along W).
        - ``x``, ``weight`` and ``bias`` may be in any memory layout (a transposed or
          sliced view, an expanded one); gradients reach all three.

    The recipe (per dim):
        1. insert ``stride - 1`` zeros between neighbouring input pixels (none
           before the first or after the last): size ``(H - 1) * stride + 1``;
        2. pad with ``k - 1 - padding`` zeros on both sides (a transposed
           conv's ``padding`` *removes* border rows of the output);
        3. flip the kernel in both spatial dims and swap its channel dims, to
           ``(C_out, C_in, kh, kw)``;
        4. convolve with stride 1 and no padding, and add the bias.

    Example (d2l's: every input pixel stamps a scaled copy of the kernel):
        >>> x = torch.tensor([[[[0., 1.], [2., 3.]]]])
        >>> k = torch.tensor([[[[0., 1.], [2., 3.]]]])
        >>> conv_transpose2d(x, k)
        tensor([[[[ 0.,  0.,  1.],
                  [ 0.,  4.,  6.],
                  [ 4., 12.,  9.]]]])

    Pitfalls the notes warn about:
        - Without the flip you get a correlation with the un-rotated kernel:
          right shape, wrong numbers.
        - The stride lives in the zeros you insert, not in the convolution
          (that one has stride 1); ``stride - 1`` zeros *between* pixels, so
          no trailing zeros.
        - Pad by ``k - 1 - padding``, not by ``padding``.
        - ``x.view(...)`` raises on a transposed or sliced x: index into the zeros
          (``out[:, :, ::sh, ::sw] = x``) or use ``reshape``.

    Pitfalls:
        - The weight is ``(C_in, C_out, ...)``, not ``(C_out, C_in, ...)``:
          transpose dims 0 and 1 before the ordinary convolution.
        - Keep the dtype and device of ``x`` (``x.new_zeros``) and stay in the
          autograd graph.

    Forbidden: ``F.conv_transpose*``, ``nn.ConvTranspose*``,
    ``torch.convolution``. Use ``F.pad`` and ``F.conv2d`` (or your own
    ``conv2d``) for steps 2 and 4. (``torch.convolution`` shares its kernel with
    the allowed ``F.conv2d``, so it is refused by name only; reaching it through
    ``torch._C`` or ``torch.ops`` is flagged for your instructor.)
    """
    raise NotImplementedError
