"""Attack: max pooling by torch's decomposition of ``aten::max_pool2d_with_indices``
(``torch._decomp.decompositions.max_pool2d_with_indices``), a plain Python function
built from allowed operators; average pooling is not attempted.
"""

import torch._decomp.decompositions as decompositions


def _pair(value):
    return (value, value) if isinstance(value, int) else (int(value[0]), int(value[1]))


def pool2d(x, kernel, stride=None, padding=0, mode="max"):
    if mode not in ("max", "avg"):
        raise ValueError(f"mode must be 'max' or 'avg', got {mode!r}")
    if mode == "avg":
        raise NotImplementedError
    kh, kw = _pair(kernel)
    sh, sw = _pair(kernel if stride is None else stride)
    ph, pw = _pair(padding)
    if ph > kh // 2 or pw > kw // 2:
        raise ValueError(f"padding {(ph, pw)} is more than half the kernel {(kh, kw)}")
    height, width = x.shape[-2:]
    if height + 2 * ph < kh or width + 2 * pw < kw:
        raise ValueError(f"the {kh}x{kw} window does not fit the padded "
                         f"{height + 2 * ph}x{width + 2 * pw} input")
    return decompositions.max_pool2d_with_indices(x, [kh, kw], [sh, sw], [ph, pw])[0]
