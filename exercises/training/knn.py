"""k-nearest-neighbour classification with ``topk`` and a majority vote.

A query gets the label most common among the ``k`` training points closest to
it (Euclidean distance). There is no training: the training set *is* the model.
"""

import torch


def knn_predict(train_x: torch.Tensor, train_y: torch.Tensor, queries: torch.Tensor,
                k: int) -> torch.Tensor:
    """Predict a label for every query by a majority vote of its k nearest neighbours.

    Shapes:
        - ``train_x``: ``(N, D)`` floating point, the training points.
        - ``train_y``: ``(N,)`` ``torch.int64`` class labels, all ``>= 0``.
        - ``queries``: ``(M, D)``, same dtype and device as ``train_x``.
        - Any of them may be non-contiguous (``train_x`` stored as a transposed
          ``(D, N)`` tensor, strided views).
        - Result: ``(M,)`` ``torch.int64`` labels, on the inputs' device.

    Spec:
        - Distance is Euclidean. The squared distance ranks the points the same
          way and needs no square root: ``((q - x) ** 2).sum(-1)`` for every
          (query, training point) pair, through broadcasting
          (``queries[:, None, :] - train_x[None, :, :]`` is ``(M, N, D)``).
        - The k nearest: ``Tensor.topk(k, dim=..., largest=False)``; its
          ``.indices`` pick the neighbours' labels out of ``train_y``.
        - Vote per query: the label with the most neighbours wins; when several
          labels tie for the most votes, the **smallest** label wins.
        - Raise ``ValueError`` unless ``1 <= k <= N``.

    Example:
        >>> train_x = torch.tensor([[0.0], [1.0], [2.0], [10.0], [11.0]])
        >>> train_y = torch.tensor([1, 1, 0, 0, 0])
        >>> knn_predict(train_x, train_y, torch.tensor([[0.5], [10.5]]), k=3)
        tensor([1, 0])
        >>> knn_predict(train_x, train_y, torch.tensor([[0.5]]), k=2)  # no tie: 1, 1
        tensor([1])
        >>> knn_predict(train_x, train_y, torch.tensor([[1.2]]), k=2)  # 1 (nearest), 0: a tie
        tensor([0])

    Counting votes without a Python loop over queries: add a 1 per neighbour
    into a ``(M, C)`` table of zeros (``scatter_add_`` along dim 1, with
    ``C = train_y.max() + 1``), then ``argmax`` along the classes: it returns
    the *first* maximum, which is the smallest tied label.

    Pitfalls:
        - ``topk`` takes the *largest* values unless told ``largest=False``:
          by default you get the k farthest points.
        - Count votes per query (per row), not over the whole batch's
          neighbours at once.
        - A tie is not settled by the nearest neighbour's label (what
          ``collections.Counter.most_common`` does when it sees neighbours
          nearest first): here the smallest tied label wins.
        - Do not drop the first neighbour: the queries are not training points.
        - Euclidean means squared differences summed: not ``|q - x|`` summed (L1),
          not the largest ``|q - x|``, not ``(sum of q - x) ** 2``. They agree in one
          dimension and on 0/1 coordinates, not in general: from the origin, (3, 0)
          is nearer than (2, 2) by L1 but farther by Euclid.
        - Subtract before squaring. The expansion ``|q|^2 - 2 q.x + |x|^2`` (one
          matmul) cancels catastrophically for points far from the origin
          (coordinates near 1e9 lose every digit of their distances, even in float64).
    """
    raise NotImplementedError
