"""Resizing an image by hand: where each output pixel reads, then nearest and bilinear.

``F.interpolate(x, size=...)`` resizes the two last dims of an ``(N, C, H, W)`` batch.
Every output pixel ``i`` reads the input at some position along H and along W; the
mode says how it turns that position into a value (the nearest pixel, or a blend of
the two neighbours on each axis). Write where each output pixel reads
(``source_coordinates``), then both resizes, equal to ``F.interpolate`` with
``mode="nearest"`` and ``mode="bilinear"``.
"""

from __future__ import annotations

import torch


def source_coordinates(in_size: int, out_size: int, align_corners: bool = False) -> torch.Tensor:
    """Where each of ``out_size`` output pixels reads an input of ``in_size`` pixels
    (bilinear resizing, one axis).

    Spec:
        - Coordinates are in input pixels: input pixel ``j`` sits at ``j``, so the
          answer lies in ``[0, in_size - 1]``. ``in_size >= 1`` and ``out_size >= 1``.
        - ``align_corners=True``: the centres of the corner pixels line up, so the first
          and last output pixels read the first and last input pixels:
          ``src = i * (in_size - 1) / (out_size - 1)``; with ``out_size == 1`` the only
          output pixel reads pixel 0.
        - ``align_corners=False`` (the default): the outer edges of the corner pixels line
          up. Pixel ``i`` covers ``[i, i + 1)`` and its centre is ``i + 0.5``; the
          centres are what map onto each other, with the scale ``in_size / out_size``:
          ``src = (i + 0.5) * in_size / out_size - 0.5``.
        - Then clamp to ``[0, in_size - 1]``: PyTorch clamps a negative coordinate to 0,
          and past the last pixel it reads the last pixel alone. The result is exactly
          what ``F.interpolate``'s linear modes read: interpolating the ramp
          ``0, 1, ..., in_size - 1`` gives it back.
        - Return a float64 tensor of shape ``(out_size,)``.

    Example:
        >>> source_coordinates(2, 4)                # -0.25 and 1.25 clamped
        tensor([0.0000, 0.2500, 0.7500, 1.0000], dtype=torch.float64)
        >>> source_coordinates(2, 4, align_corners=True)
        tensor([0.0000, 0.3333, 0.6667, 1.0000], dtype=torch.float64)

    Pitfalls, from the geometry the notes describe (file 001, ``F.interpolate``:
    pixels are squares, not points; with ``align_corners=False`` the corners of the
    corner pixels line up, and values outside the input are the edge values):
        - The half-pixel offset: ``i * in_size / out_size`` lines up the pixels' left
          edges, not their centres, and shifts the image by up to half a pixel.
        - The clamp: without it an upsampled border blends in a pixel at -1 (with
          negative indexing, the far side of the image).

    And one the notes do not mention: ``(in_size - 1) / (out_size - 1)`` divides by
    zero when ``out_size == 1``.
    """
    raise NotImplementedError


def resize_nearest(x: torch.Tensor, size: int | tuple[int, int]) -> torch.Tensor:
    """Resize ``x`` to ``size`` by copying the nearest pixel, equal to
    ``F.interpolate(x, size, mode="nearest")``.

    Spec:
        - ``x``: ``(N, C, H, W)``, floating point, in any memory layout (a transposed
          or sliced view, an expanded one). ``size``: ``(H_out, W_out)``, or one int
          for both.
        - Output pixel ``i`` along an axis copies input pixel
          ``floor(i * in_size / out_size)``, along H and along W. There is no half-pixel
          offset and no ``align_corners`` here: PyTorch's "nearest" is this rule (its
          centred variant is ``mode="nearest-exact"``).
        - Return a new tensor ``(N, C, H_out, W_out)`` with the dtype and device of
          ``x`` (a copy even when the size does not change), in the autograd graph.
        - PyTorch computes ``in_size / out_size`` in float32, which rounds some indices
          down by one for sizes above 25; up to 25 it is exactly
          ``(i * in_size) // out_size``, and the tests stay there.

    Example:
        >>> x = torch.tensor([[[[1., 2.], [3., 4.]]]])
        >>> resize_nearest(x, 4)
        tensor([[[[1., 1., 2., 2.],
                  [1., 1., 2., 2.],
                  [3., 3., 4., 4.],
                  [3., 3., 4., 4.]]]])

    Forbidden: ``F.interpolate``, ``F.upsample*``, ``F.grid_sample``, ``nn.Upsample*``
    and their kernels. Build the indices of each axis with ``torch.arange`` and index
    ``x`` with them.
    """
    raise NotImplementedError


def resize_bilinear(x: torch.Tensor, size: int | tuple[int, int],
                    align_corners: bool = False) -> torch.Tensor:
    """Resize ``x`` to ``size`` by bilinear interpolation, equal to
    ``F.interpolate(x, size, mode="bilinear", align_corners=align_corners)``.

    Spec:
        - ``x`` and ``size`` as in ``resize_nearest``.
        - Along each axis, output pixel ``i`` reads at ``src = source_coordinates(in_size,
          out_size, align_corners)[i]``: between input pixels ``j = floor(src)`` and
          ``min(j + 1, in_size - 1)``, with weights ``1 - t`` and ``t``, ``t = src - j``.
          Bilinear is that along H, then along W (or the other way round: the same
          numbers), so each output pixel blends four input pixels.
        - Return a new tensor ``(N, C, H_out, W_out)`` with the dtype and device of
          ``x``, in the autograd graph (gradients reach ``x``).

    Example:
        >>> x = torch.tensor([[[[1., 2.], [3., 4.]]]])
        >>> resize_bilinear(x, (2, 4))
        tensor([[[[1.0000, 1.2500, 1.7500, 2.0000],
                  [3.0000, 3.2500, 3.7500, 4.0000]]]])
        >>> resize_bilinear(x, (2, 4), align_corners=True)
        tensor([[[[1.0000, 1.3333, 1.6667, 2.0000],
                  [3.0000, 3.3333, 3.6667, 4.0000]]]])

    Pitfalls: those of ``source_coordinates``, and precision: ``torch.arange(n)`` times
    a Python float is float32, and float32 weights blur a float64 image. Compute the
    coordinates in float64 and convert the weights to ``x.dtype``.

    Forbidden: as in ``resize_nearest``. Gather the rows (and then the columns) with
    integer index tensors and blend them with the weights.
    """
    raise NotImplementedError
