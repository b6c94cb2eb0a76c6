"""K-fold cross-validation: the train and validation indices of one fold.

Cross-validation splits the ``n`` examples of a data set into ``k`` folds; fold
``f`` is held out for validation while the model trains on the other ``k - 1``.
Run once per fold, every example is validated on exactly once.
"""

import torch


def kfold_indices(n: int, k: int, fold: int, shuffle: bool = False,
                  seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Return ``(train, valid)``: the example indices of fold ``fold`` of ``k``.

    Spec:
        - ``order`` is ``torch.arange(n)``, or with ``shuffle=True`` the
          permutation ``torch.randperm(n, generator=g)`` where
          ``g = torch.Generator().manual_seed(seed)`` (``seed`` is ignored
          without shuffling).
        - Cut ``order`` into ``k`` consecutive folds whose sizes differ by at most
          one: the first ``n % k`` folds get ``n // k + 1`` indices, the others
          ``n // k``. (That is how ``torch.tensor_split`` and scikit-learn's
          ``KFold`` cut.)
        - ``valid`` is fold number ``fold`` (in ``order``'s order); ``train`` is
          ``order`` with that fold taken out, the rest kept in order.
        - Both are 1-D ``torch.int64`` tensors; together they hold each of
          ``0 .. n-1`` exactly once.
        - Raise ``ValueError`` if ``k < 2``, if ``k > n`` (some fold would be
          empty), or if ``fold`` is not in ``0 .. k-1``.

    Example:
        >>> train, valid = kfold_indices(10, 4, 1)
        >>> valid          # folds are [0 1 2] [3 4 5] [6 7] [8 9]
        tensor([3, 4, 5])
        >>> train
        tensor([0, 1, 2, 6, 7, 8, 9])

    Pitfalls:
        - ``n // k`` per fold with the remainder dumped on the last fold gives
          sizes 2, 2, 2, 4 for ``n=10, k=4``: the last fold is far bigger.
        - ``torch.chunk`` is not ``tensor_split``: it makes chunks of
          ``ceil(n / k)`` (3, 3, 3, 1 for ``n=10, k=4``) and can return fewer
          than ``k`` chunks (``chunk(arange(5), 4)`` gives 3).
        - Each fold is a separate call, so every call must rebuild *the same*
          permutation: draw it from a generator seeded with ``seed``. An unseeded
          ``torch.randperm(n)`` (or a seed that changes with the fold) makes the
          folds of one run overlap and miss examples.
        - Use your own ``torch.Generator``; never ``torch.manual_seed``: it
          resets the global random state the caller's training relies on.
    """
    raise NotImplementedError
