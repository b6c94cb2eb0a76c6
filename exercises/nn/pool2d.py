"""2-D max and average pooling, by hand.

Pooling slides a window over every channel of a feature map and keeps one
number per window: the largest (max pooling) or the mean (average pooling).
Write it yourself, equal to ``F.max_pool2d`` and ``F.avg_pool2d`` with their
defaults (``ceil_mode=False``, ``count_include_pad=True``).
"""

import torch
import torch.nn.functional as F  # noqa: F401  (F.pad and F.unfold are allowed)


def pool2d(x: torch.Tensor, kernel: int | tuple[int, int],
           stride: int | tuple[int, int] | None = None,
           padding: int | tuple[int, int] = 0, mode: str = "max") -> torch.Tensor:
    """Pool ``x`` of shape ``(N, C, H, W)`` with a ``kernel`` window; ``mode`` is "max" or "avg".

    Spec:
        - ``kernel``, ``stride`` and ``padding`` are an int (the same for height and
          width) or a pair ``(for H, for W)``. ``stride=None`` means the stride
          equals the kernel: non-overlapping windows.
        - ``padding`` adds that many positions on both sides of H (and of W). For
          "max" they never win (they act as -infinity); for "avg" they count as
          zeros and every window is divided by ``kh * kw``, padding included (as
          ``F.avg_pool2d``'s default ``count_include_pad=True``).
        - A window is used only where it fits entirely inside the padded input:
          ``H_out = (H + 2 * ph - kh) // sh + 1`` (and the same for W).
        - Return a NEW tensor (never ``x`` or a view of it, even for a 1x1 window
          with stride 1) of shape ``(N, C, H_out, W_out)`` with the dtype (float16
          and bfloat16 included, on the CPU too) and device of ``x``; gradients must
          flow back to ``x``.
        - ``x`` may be in any memory layout (a transposed or sliced view).
        - Raise ``ValueError`` if ``mode`` is neither "max" nor "avg", if the padding
          is more than half the kernel (``ph > kh // 2`` or ``pw > kw // 2``, which
          PyTorch refuses too), or if the window does not fit the padded input.

    Example:
        >>> x = torch.tensor([[[[1., 2., 3., 4.],
        ...                     [5., 6., 7., 8.]]]])
        >>> pool2d(x, 2)                      # two 2x2 windows
        tensor([[[[6., 8.]]]])
        >>> pool2d(x, 2, mode="avg")
        tensor([[[[3.5000, 5.5000]]]])
        >>> pool2d(-x, (1, 2), stride=1, padding=(0, 1))   # the padding never wins a max
        tensor([[[[-1., -1., -2., -3., -4.],
                  [-5., -5., -6., -7., -8.]]]])

    How: pad (``F.pad`` with ``value=float("-inf")`` for max, 0 for avg), cut all
    windows at once with ``Tensor.unfold`` along H and then along W (shape
    ``(N, C, H_out, W_out, kh, kw)``), and reduce the last two dims. A double loop
    over output positions that slices windows also works.

    A mistake the notes' own code makes:
        - ``stride=None`` is the kernel, not 1. The notes' ``pool2d`` moves its
          window one step at a time (its output is ``H - p_h + 1`` high): a
          stride of 1, where ``nn.MaxPool2d`` steps by the kernel.

    Pitfall the notes warn about:
        - ``x.view(N * C, 1, H, W)`` raises on a non-contiguous x: ``reshape`` works.

    Pitfalls:
        - Padding a max pool with zeros: a window of negative values next to the
          border would then return 0.
        - ``F.pad`` takes the last dimension first: ``(left, right, top, bottom)``.

    Forbidden: every pooling function (``F.max_pool2d``, ``F.avg_pool2d``,
    ``F.adaptive_*_pool*``, ``F.lp_pool*``, ``torch.max_pool*``, ... and the
    ``nn.*Pool*`` modules that call them).
    """
    raise NotImplementedError
