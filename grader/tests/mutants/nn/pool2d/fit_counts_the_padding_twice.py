"""Mistake: the fit check runs on the already padded input and adds the padding again
(``padded.shape[-2] + 2 * ph < kh``), so a window that does not fit the padded input
passes the check when there is padding, and ``unfold`` then fails with a RuntimeError
instead of the ValueError the spec asks for. Without padding it is right."""

import torch.nn.functional as F

CAUGHT_BY = ("test_window_larger_than_input_raises_value_error",)


def _pair(v):
    return (v, v) if isinstance(v, int) else (int(v[0]), int(v[1]))


def pool2d(x, kernel, stride=None, padding=0, mode="max"):
    if mode not in ("max", "avg"):
        raise ValueError(f"unknown mode {mode!r}")
    kh, kw = _pair(kernel)
    sh, sw = _pair(kernel if stride is None else stride)
    ph, pw = _pair(padding)
    if ph > kh // 2 or pw > kw // 2:
        raise ValueError("padding is more than half the kernel")
    padded = F.pad(x, (pw, pw, ph, ph), value=float("-inf") if mode == "max" else 0.0)
    if padded.shape[-2] + 2 * ph < kh or padded.shape[-1] + 2 * pw < kw:
        raise ValueError("the window does not fit the padded input")
    windows = padded.unfold(2, kh, sh).unfold(3, kw, sw)
    if mode == "max":
        return windows.amax(dim=(-2, -1))
    return windows.sum(dim=(-2, -1)) / (kh * kw)
