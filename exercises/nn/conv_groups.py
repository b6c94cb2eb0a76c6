"""Grouped and depthwise convolution, with 'same' / 'valid' padding and padding modes.

``nn.Conv2d`` has three settings the plain convolution (the ``nn/conv2d`` drill) leaves
out. ``groups`` splits the channels into independent blocks (``groups == C_in`` is the
depthwise convolution of MobileNet and ShuffleNet). ``padding`` may be the string
``'same'`` (the output keeps the input's size) or ``'valid'`` (no padding). And
``padding_mode`` says what the border is made of: zeros, or copies of the input
(mirrored, repeated or wrapped around). Work out what ``'same'`` pads
(``same_padding``), then the whole layer (``conv2d_groups``), equal to ``nn.Conv2d``.
"""

from __future__ import annotations

import torch


def same_padding(kernel_size: int, dilation: int = 1) -> tuple[int, int]:
    """Return ``(before, after)``: what ``padding='same'`` adds on each side of one
    spatial dimension.

    Spec:
        - A kernel of ``kernel_size >= 1`` taps, ``dilation >= 1`` apart, spans
          ``dilation * (kernel_size - 1) + 1`` inputs; with stride 1 the output keeps the
          input's length exactly when the two sides add up to
          ``total = dilation * (kernel_size - 1)``.
        - PyTorch puts ``total // 2`` before and the rest after: an odd total puts the
          extra position at the END (bottom or right), as ``F.conv2d(padding='same')``
          and ``nn.Conv2d`` do.
        - Return a tuple of two Python ints.

    Example:
        >>> same_padding(3)
        (1, 1)
        >>> same_padding(4)               # total 3: the extra one goes after
        (1, 2)
        >>> same_padding(2, dilation=3)   # the taps sit 3 apart: total 3
        (1, 2)

    Pitfalls, where the notes' own text goes wrong (file 000, §20): the notes solve
    ``2p - f + 1 = 0`` for ``p = (f - 1) / 2`` padded on both sides, which is no whole
    number for an even kernel; rounding it (``k // 2`` on both sides, as popular
    detection code does) makes the output one longer than the input. And the total
    grows with the dilation: it is ``dilation * (kernel_size - 1)``, not
    ``kernel_size - 1``.
    """
    raise NotImplementedError


def conv2d_groups(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
                  stride: int | tuple[int, int] = 1, padding: int | tuple[int, int] | str = 0,
                  dilation: int | tuple[int, int] = 1, groups: int = 1, *,
                  padding_mode: str) -> torch.Tensor:
    """``nn.Conv2d``'s forward with these settings and this ``weight`` and ``bias``.

    Spec:
        - ``x``: ``(N, C_in, H, W)``; ``weight``: ``(C_out, C_in / groups, kh, kw)``;
          ``bias``: ``None`` or ``(C_out,)`` (always passed: ``None`` for no bias).
          ``stride`` and ``dilation``: an int or an ``(along H, along W)`` pair, as in
          ``nn/conv2d``. Any tensor may be in any memory layout (a transposed or sliced
          view, an expanded one); the result has the dtype and device of ``x`` and is in
          the autograd graph (gradients reach ``x``, ``weight`` and ``bias``).
        - ``groups``: the input channels are cut into ``groups`` consecutive blocks of
          ``C_in / groups``, the output channels into ``groups`` blocks of
          ``C_out / groups``; output block ``k`` is the convolution of input block ``k``
          with weight rows ``k * C_out / groups`` up to ``(k + 1) * C_out / groups``.
          ``groups == C_in`` is the depthwise convolution: every output channel sees one
          input channel.
        - ``padding``: an int or a pair (that many on both sides of H, of W),
          ``'valid'`` (none), or ``'same'``: ``same_padding(kh, dil_h)`` along H and
          ``same_padding(kw, dil_w)`` along W, so the output is ``H x W``.
        - ``padding_mode`` (keyword, required here; ``nn.Conv2d``'s default is
          ``'zeros'``): what the padding is made of. ``'zeros'``; ``'reflect'``: the
          input mirrored at its border, the border itself not repeated (``1 2 3`` padded
          by one is ``2 1 2 3 2``); ``'replicate'``: the border repeated (``1 1 2 3 3``);
          ``'circular'``: wrapped around (``3 1 2 3 1``). ``nn.Conv2d`` pads that way
          first, then convolves without padding.
        - Raise ``ValueError``, before any work, when ``weight.shape[1] * groups`` is not
          ``C_in``, when ``groups`` does not divide ``C_out``, when ``padding`` is a string
          other than ``'same'`` and ``'valid'`` or is ``'same'`` with a stride other than 1,
          and when ``padding_mode`` is none of the four (``'constant'``, ``F.pad``'s name
          for zeros, included).

    Example:
        >>> x = torch.ones(1, 4, 5, 5)
        >>> w = torch.ones(6, 2, 3, 3)    # groups=2: each output channel sees 4 / 2 channels
        >>> conv2d_groups(x, w, None, padding=1, groups=2, padding_mode="zeros")[0, :, 2, 2]
        tensor([18., 18., 18., 18., 18., 18.])
        >>> conv2d_groups(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 2, 2), None,
        ...               padding="same", padding_mode="zeros")[0, 0]
        tensor([[4., 4., 2.],
                [4., 4., 2.],
                [2., 2., 1.]])
        >>> x = torch.tensor([[[[1., 2., 3.]]]])
        >>> for mode in ("zeros", "reflect", "replicate", "circular"):
        ...     out = conv2d_groups(x, torch.ones(1, 1, 1, 3), None, padding=(0, 1), padding_mode=mode)
        ...     print(mode, out.flatten().tolist())
        zeros [3.0, 6.0, 5.0]
        reflect [5.0, 6.0, 7.0]
        replicate [4.0, 6.0, 8.0]
        circular [6.0, 6.0, 6.0]

    (The 'same' example pads one zero row and column at the END: bottom and right.)

    Pitfalls, where the notes' own text goes wrong (file 000, §19):
        - The notes write the weight as ``(C_out, C_in, K_H, K_W)``: true only for
          ``groups=1``. With groups its second dim is ``C_in / groups``, and output
          channel ``o`` belongs to block ``o // (C_out / groups)`` (consecutive blocks,
          not ``o % groups``).
        - The notes say ``padding_mode`` picks "what number to fill besides 0": only
          ``'zeros'`` fills a number; the other modes copy the input's own values.
        - ``F.pad`` takes ``(left, right, top, bottom)``, W first, and calls zeros
          ``'constant'``: ``F.pad(x, p, mode='zeros')`` raises.

    Forbidden: ``F.conv*``, ``torch.conv*``, ``torch.convolution``, ``nn.Conv*``, their
    kernels, and convolution's backward (``torch.nn.grad``), which computes one too.
    ``F.pad`` (every mode), ``Tensor.unfold``, ``F.unfold``, ``einsum`` and
    ``matmul`` are allowed: pad once, take every window, and contract each group's
    channels with its block of the weight.
    """
    raise NotImplementedError
