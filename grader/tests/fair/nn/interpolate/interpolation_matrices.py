"""Right, written another way: a resize along one axis is a matrix (out_size x in_size)
whose row i holds the weights output pixel i gives the input pixels (one 1 for nearest,
1 - t and t for linear), and a 2-D resize is A_h @ x @ A_w^T, one einsum. The matrices
are filled with index_put_ (accumulate, so a pixel read twice at the border adds up).
"""

import torch


def source_coordinates(in_size, out_size, align_corners=False):
    i = torch.arange(out_size, dtype=torch.float64)
    if align_corners:
        src = i * (in_size - 1) / max(out_size - 1, 1)
    else:
        src = (i + 0.5) / out_size * in_size - 0.5
    return torch.clamp(src, 0, in_size - 1)


def _hw(size):
    return (size, size) if isinstance(size, int) else tuple(int(s) for s in size)


def _nearest_matrix(in_size, out_size, x):
    matrix = x.new_zeros(out_size, in_size)
    rows = torch.arange(out_size, device=x.device)
    matrix[rows, rows * in_size // out_size] = 1
    return matrix


def _linear_matrix(in_size, out_size, align_corners, x):
    src = source_coordinates(in_size, out_size, align_corners).to(x.device)
    low = src.floor().long()
    high = torch.minimum(low + 1, torch.tensor(in_size - 1, device=x.device))
    t = (src - low).to(x.dtype)
    matrix = x.new_zeros(out_size, in_size)
    rows = torch.arange(out_size, device=x.device)
    matrix.index_put_((rows, low), 1 - t, accumulate=True)
    matrix.index_put_((rows, high), t, accumulate=True)
    return matrix


def resize_nearest(x, size):
    out_h, out_w = _hw(size)
    a_h, a_w = _nearest_matrix(x.shape[-2], out_h, x), _nearest_matrix(x.shape[-1], out_w, x)
    return torch.einsum("oh,nchw,pw->ncop", a_h, x, a_w)


def resize_bilinear(x, size, align_corners=False):
    out_h, out_w = _hw(size)
    a_h = _linear_matrix(x.shape[-2], out_h, align_corners, x)
    a_w = _linear_matrix(x.shape[-1], out_w, align_corners, x)
    return torch.einsum("oh,nchw,pw->ncop", a_h, x, a_w)
