"""2-D convolution from scratch.

What deep learning calls a convolution is a cross-correlation: slide a small
kernel over the input and, at every position, take the sum of the elementwise
product of the kernel with the window under it. First for one channel
(``corr2d``), then the full layer (``conv2d``) with channels, a batch, bias,
stride, padding and dilation, equal to ``torch.nn.functional.conv2d``.
"""

from __future__ import annotations

import torch


def corr2d(x: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Cross-correlate one 2-D map with one 2-D kernel ("valid": no padding).

    Spec:
        - ``x`` has shape ``(H, W)``, ``k`` has shape ``(kh, kw)`` with
          ``kh <= H`` and ``kw <= W``.
        - The result has shape ``(H - kh + 1, W - kw + 1)`` and the dtype of
          ``x`` (float16 and bfloat16 included); ``out[i, j] = (x[i:i + kh, j:j + kw]
          * k).sum()``. Gradients reach ``x`` and ``k``.
        - ``x`` and ``k`` may be in any memory layout (a transposed or sliced view,
          an expanded one).

    Example:
        >>> x = torch.arange(9.).reshape(3, 3)
        >>> corr2d(x, torch.tensor([[0., 1.], [2., 3.]]))
        tensor([[19., 25.],
                [37., 43.]])

    (top left: 0*0 + 1*1 + 3*2 + 4*3 = 19.)

    A mistake the notes' own code makes:
        - ``torch.zeros(shape)`` is float32 on the CPU: make the result with
          ``x.new_zeros`` (or ``dtype=x.dtype, device=x.device``) so a float64
          or GPU input gives a float64 or GPU output. The notes' ``corr2d`` turns
          its inputs to float32 with ``.float()`` and its result is a plain
          ``torch.zeros``: float64 in, float32 out.

    Pitfalls:
        - Do not flip the kernel: a mathematician's convolution flips it, the
          deep learning one (and ``F.conv2d``) does not.
        - Keep the result in the autograd graph: no ``.item()`` or
          ``torch.tensor(list_of_numbers)``; writing into a tensor made with
          ``new_zeros`` (``out[i, j] = ...``) keeps gradients flowing.

    Forbidden: ``F.conv*``, ``torch.convolution``, ``nn.Conv*``. Two loops over
    the output positions are fine; ``Tensor.unfold`` gives every window at once.
    """
    raise NotImplementedError


def conv2d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
           stride: int | tuple[int, int] = 1, padding: int | tuple[int, int] = 0,
           dilation: int | tuple[int, int] = 1) -> torch.Tensor:
    """Batched, multi-channel 2-D convolution, equal to ``F.conv2d`` (``groups=1``).

    Spec:
        - ``x``: ``(N, C_in, H, W)``; ``weight``: ``(C_out, C_in, kh, kw)``;
          ``bias``: ``None`` or ``(C_out,)``, added to every position of its
          output channel.
        - ``stride``, ``padding``, ``dilation``: an int (both dims) or a pair
          ``(along H, along W)``.
        - ``padding`` adds that many zeros on *both* sides of H (and of W).
          ``dilation`` spreads the kernel's taps ``dilation`` apart (1 = dense),
          so a kernel of size ``k`` spans ``dilation * (k - 1) + 1`` inputs.
          ``stride`` is the step between window positions.
        - ``x``, ``weight`` and ``bias`` may be in any memory layout (a transposed or
          sliced view, an expanded one); float16 and bfloat16 inputs give a result in
          that dtype (on the CPU too).
        - Output ``(N, C_out, H_out, W_out)``, dtype and device of ``x``, with
          ``H_out = (H + 2 * pad_h - dil_h * (kh - 1) - 1) // stride_h + 1``
          (the same along W).
        - Output channel ``o`` is the sum over input channels ``c`` of
          ``corr2d(padded x[n, c], weight[o, c])`` (with stride and dilation),
          plus ``bias[o]``.

    Example:
        >>> x = torch.ones(1, 2, 5, 5)
        >>> conv2d(x, torch.ones(3, 2, 3, 3), torch.tensor([0., 1., 2.]), padding=1).shape
        torch.Size([1, 3, 5, 5])
        >>> conv2d(x, torch.ones(3, 2, 3, 3), stride=2)[0, :, 0, 0]  # 2 channels * 9 taps
        tensor([18., 18., 18.])

    Pitfalls the notes warn about:
        - ``H_out`` uses floor division and ``+ 1``; padding counts twice.
        - ``weight.view(C_out, -1)`` raises on a transposed or sliced weight:
          ``reshape`` (or ``einsum``) works on any layout.

    Pitfalls:
        - No kernel flip (see ``corr2d``); channels are summed, not kept apart.
        - The bias is per output channel: reshape it to ``(1, C_out, 1, 1)``
          before adding (``out + bias`` would broadcast it along W).
        - Output dtype/device follow ``x`` and gradients must reach ``x``,
          ``weight`` and ``bias`` (see ``corr2d``).

    Forbidden: ``F.conv*``, ``torch.convolution``, ``nn.Conv*``. Use
    ``F.pad`` for the zeros, then loops, or ``Tensor.unfold`` (a strided view
    of every window; ``[..., ::dil_h, ::dil_w]`` keeps the dilated taps) with
    ``torch.einsum`` or ``F.unfold`` (im2col) with a matrix product.
    """
    raise NotImplementedError
