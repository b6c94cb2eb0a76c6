"""Right, written another way, after tinygrad: split turns an int into its list of sizes
first (``min(k, n - i)`` for each start ``i``, at least one piece), and every piece is a
slice of x, a subscript with ``slice(start, end)`` at ``dim`` (a view, as ``narrow`` gives);
chunk is split by ``ceil(n / chunks)``, or by ``chunks`` zeros for an empty dim. stack and
cat write into a new tensor through subscripts instead of ``select``/``narrow``, and cat
skips the (0,) tensors first.

Provenance: tinygrad/tinygrad, tinygrad/mixin/movement.py (commit
a9069c177a9da9cca18593edf55acd2e6073cca6): ``split(sizes, dim)`` builds
``[min(sizes, dim_sz - i) for i in range(0, max(1, dim_sz), max(1, sizes))]`` and ``shrink``s
x to each running range; ``chunk`` calls ``split(ceildiv(dim_sz, chunks) if dim_sz else
[0] * chunks)``; ``stack`` resolves a negative dim against ndim + 1. tinygrad checks with
``assert``; this rewrite raises the spec's ValueError and IndexError instead (no code
copied).
"""

from __future__ import annotations

import torch


def _resolve(dim, ndim):
    if dim < -ndim or dim >= ndim:
        raise IndexError(f"dim={dim} out of range [{-ndim}, {ndim - 1}]")
    return dim + ndim if dim < 0 else dim


def _at(ndim, d, index):
    """A subscript that takes ``index`` at dim ``d`` and everything elsewhere."""
    return (slice(None),) * d + (index,) + (slice(None),) * (ndim - d - 1)


def stack(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise ValueError("stack of nothing")
    shape = tensors[0].shape
    if not all(t.shape == shape for t in tensors):
        raise ValueError(f"all shapes must match for stack, got {[tuple(t.shape) for t in tensors]}")
    d = _resolve(dim, len(shape) + 1)
    out_shape = list(shape)
    out_shape.insert(d, len(tensors))
    out = torch.empty(out_shape, dtype=tensors[0].dtype, device=tensors[0].device)
    for i, t in enumerate(tensors):
        out[_at(len(out_shape), d, i)] = t
    return out


def cat(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise ValueError("cat of nothing")
    if any(t.dim() == 0 for t in tensors):
        raise ValueError("zero-dimensional tensors cannot be concatenated")
    real = [t for t in tensors if t.shape != (0,)]
    if not real:
        return torch.empty(0, dtype=tensors[0].dtype, device=tensors[0].device)
    d = _resolve(dim, real[0].dim())
    for t in real:
        if t.dim() != real[0].dim() or any(ti != ai for i, (ti, ai) in enumerate(zip(t.shape, real[0].shape)) if i != d):
            raise ValueError(f"sizes must match except in dim {d}")
    out_shape = list(real[0].shape)
    out_shape[d] = sum(t.shape[d] for t in real)
    out = torch.empty(out_shape, dtype=real[0].dtype, device=real[0].device)
    offset = 0
    for t in real:
        out[_at(len(out_shape), d, slice(offset, offset + t.shape[d]))] = t
        offset += t.shape[d]
    return out


def split(x, split_size_or_sections, dim=0):
    if x.dim() == 0:
        raise ValueError("split of a 0-d tensor")
    d = _resolve(dim, x.dim())
    n = x.shape[d]
    sizes = split_size_or_sections
    if isinstance(sizes, int):
        if sizes < 0 or (sizes == 0 and n > 0):
            raise ValueError(f"split_size {sizes} for a dim of size {n}")
        sizes = [min(sizes, n - i) for i in range(0, max(1, n), max(1, sizes))]
    sizes = list(sizes)
    if any(s < 0 for s in sizes) or sum(sizes) != n:
        raise ValueError(f"expect sizes to sum exactly to {n}, but got {sizes}")
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    return tuple(x[_at(x.dim(), d, slice(a, a + s))] for a, s in zip(starts, sizes))


def chunk(x, chunks, dim=0):
    if chunks <= 0:
        raise ValueError(f"expect chunks to be greater than 0, got: {chunks}")
    if x.dim() == 0:
        raise ValueError("chunk of a 0-d tensor")
    d = _resolve(dim, x.dim())
    n = x.shape[d]
    return split(x, -(-n // chunks) if n else [0] * chunks, d)
