"""Scaled dot-product attention, with the causal and padding masks that feed it.

The attention of "Attention Is All You Need" (and of The Annotated Transformer):
every query scores every key, the scores become weights with a softmax, and the
output is the weighted average of the values. Masks say which keys a query may
look at. Build it from matrix products and a softmax.
"""

from __future__ import annotations

import math  # noqa: F401

import torch


def attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
              mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Return ``(output, p_attn)`` of scaled dot-product attention.

    Shapes:
        ``query`` is ``(..., L_q, d_k)``, ``key`` is ``(..., L_k, d_k)``, ``value`` is
        ``(..., L_k, d_v)``, with the same leading batch dims ``...`` (none, a batch,
        or batch and heads). ``p_attn`` is ``(..., L_q, L_k)``; ``output`` is
        ``(..., L_q, d_v)``. Both keep the inputs' dtype (bfloat16 and float16 too) and
        device. The inputs may be non-contiguous (a transposed ``key``, strided views) and
        the mask an expanded (stride-0) view.

    Spec:
        1. ``scores = query @ key.transpose(-2, -1) / sqrt(d_k)`` where ``d_k`` is
           ``query.size(-1)``: scale by the SQUARE ROOT of the key width.
        2. If ``mask`` is given (bool, or integers 0/1, broadcastable to the scores'
           shape, e.g. ``(1, L_q, L_k)`` or ``(B, 1, L_k)``): wherever ``mask == 0``
           the score is replaced by ``-1e9``: ``scores.masked_fill(mask == 0, -1e9)``.
           Replaced, not added to: a query row whose keys are ALL masked then holds
           -1e9 everywhere and attends uniformly (weights ``1 / L_k``).
        3. ``p_attn = softmax(scores)`` over the LAST dim (over the keys), so every
           row of ``p_attn`` sums to 1 and masked keys get weight 0.
        4. ``output = p_attn @ value``.
        Everything must stay differentiable: ``output.sum().backward()`` has to reach
        ``query``, ``key`` and ``value`` (no ``.detach()``, no ``torch.no_grad``).

    Example:
        >>> q = torch.tensor([[1., 0.], [0., 2.]])
        >>> k = torch.tensor([[2., 0.], [0., 2.]])
        >>> v = torch.tensor([[10., 0.], [0., 10.]])
        >>> out, p = attention(q, k, v)        # scores [[1.414, 0], [0, 2.828]]
        >>> p
        tensor([[0.8044, 0.1956],
                [0.0558, 0.9442]])
        >>> out, p = attention(q, k, v, mask=torch.tensor([[True, False], [True, True]]))
        >>> out
        tensor([[10.0000,  0.0000],
                [ 0.5581,  9.4419]])

    Pitfalls the notes warn about:
        - Dividing by ``d_k`` instead of ``sqrt(d_k)``, or not scaling at all.
        - Softmax over dim -2 (the queries): rows then no longer sum to 1.
        - Inverting the mask: ``mask == 0`` (or False) means "do not attend".
        - Filling with 0 instead of -1e9: exp(0) is not small, masked keys leak in.
        - ``.view(-1, L, d)`` to fold batch dims for ``bmm`` fails on a transposed or
          sliced input; ``@`` broadcasts the batch dims by itself.

    A mistake the notes' own code makes:
        - ``masked_fill(mask, -1e9)`` on float16 raises (-1e9 overflows float16);
          float32 and bfloat16 are fine. The notes' ``attention`` fills with -1e9
          whatever the dtype.

    Pitfalls:
        - Filling with ``-inf``: a fully masked row becomes ``nan``; -1e9 keeps it finite.
        - A softmax by hand, ``exp(scores) / exp(scores).sum(-1)``, overflows once scores
          reach the hundreds (inf / inf = nan): use ``softmax``, which subtracts the max.
        - In bfloat16 or float16 return bfloat16 or float16 (an upcast inside is fine if
          you cast back).

    Forbidden: ``F.scaled_dot_product_attention``, ``nn.MultiheadAttention`` and
    ``F.multi_head_attention_forward``: use ``@`` (or ``torch.matmul``),
    ``masked_fill`` and ``softmax(dim=-1)``.
    """
    raise NotImplementedError


def subsequent_mask(size: int) -> torch.Tensor:
    """Return the causal mask: a bool tensor of shape ``(1, size, size)``, True where j <= i.

    Query position ``i`` may attend to key positions ``0..i`` (itself included)
    but not to later ones. The leading 1 lets it broadcast over a batch.

    Example:
        >>> subsequent_mask(3)
        tensor([[[ True, False, False],
                 [ True,  True, False],
                 [ True,  True,  True]]])

    Hint: ``torch.tril`` of a bool ones tensor (mind the diagonal: it is True).
    """
    raise NotImplementedError


def padding_mask(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    """Return the padding mask: a bool tensor ``(B, 1, max_len)``, True on real tokens.

    ``lengths`` is a 1-D integer tensor of ``B`` sequence lengths; sequence ``b``
    has real tokens at positions ``0..lengths[b]-1`` and padding after. The
    middle 1 lets the mask broadcast over the query positions of the scores
    ``(B, L_q, max_len)``.

    Raise ``ValueError`` if a length is negative or greater than ``max_len``.

    Example:
        >>> padding_mask(torch.tensor([2, 0, 3]), 3)
        tensor([[[ True,  True, False]],
        <BLANKLINE>
                [[False, False, False]],
        <BLANKLINE>
                [[ True,  True,  True]]])

    Hint: compare ``torch.arange(max_len)`` with ``lengths`` broadcast as a column.
    """
    raise NotImplementedError
