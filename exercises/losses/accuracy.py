"""Classification accuracy: the confusion matrix, recall per class, top-k, and many batches.

Accuracy is counting: how many predictions equal their label, out of how many
samples. The notes count exactly so, a comparison and a sum:
``(pred == labels).sum().item()``, and ``(y == 1).sum()`` for the positions
where ``y == 1``. What goes wrong is what gets counted together: labels that
fall outside the classes, a class with no sample at all, ties among the top
scores, and batches of different sizes.

Labels here are 1-D ``torch.int64`` tensors of class indices. Every result stays
on the labels' (or logits') device.
"""

from __future__ import annotations

import torch


def confusion_matrix(pred: torch.Tensor, target: torch.Tensor, num_classes: int) -> torch.Tensor:
    """Return the ``(C, C)`` confusion matrix: rows are true classes, columns predicted ones.

    Spec:
        - ``pred`` and ``target`` are 1-D int64 tensors of the same length ``N``
          (``N`` may be 0); ``C = num_classes``.
        - ``counts[i, j]`` is the number of samples whose target is ``i`` and whose
          prediction is ``j``: the diagonal holds the hits, row ``i`` sums to the
          number of samples of class ``i``, and the whole matrix to ``N``. A
          ``torch.int64`` tensor on the labels' device.
        - Raise ``ValueError`` if ``num_classes < 1``, if ``pred`` and ``target``
          are not 1-D of one length, or if any label of either lies outside
          ``[0, num_classes)``.

    Example (three classes; the class-1 sample predicted as 2 sits in row 1, column 2):
        >>> pred = torch.tensor([0, 2, 1, 2])
        >>> target = torch.tensor([0, 1, 1, 2])
        >>> confusion_matrix(pred, target, 3)
        tensor([[1, 0, 0],
                [0, 1, 1],
                [0, 0, 1]])

    Pitfall: the classic trick numbers each (target, prediction) pair
    ``target * C + pred`` and counts those codes. A prediction equal to ``C``
    then lands in the NEXT row (``i * C + C`` is ``(i + 1) * C + 0``), a
    negative one in the previous row: no error, just a wrong matrix. Check the
    labels first.

    Forbidden: ``torch.bincount``, ``torch.histc``, ``torch.histogram`` and
    ``torch.histogramdd``, which count for you. Count with comparisons and sums
    (a one-hot, ``==`` against ``torch.arange``), or with ``index_put_(...,
    accumulate=True)`` / ``scatter_add_``.
    """
    raise NotImplementedError


def per_class_accuracy(pred: torch.Tensor, target: torch.Tensor, num_classes: int) -> torch.Tensor:
    """Return each class's accuracy (its recall): hits of class ``i`` / samples of class ``i``.

    Spec:
        - Arguments and errors as in ``confusion_matrix``.
        - A ``(C,)`` ``torch.float32`` tensor: entry ``i`` is the diagonal entry
          ``counts[i, i]`` over the sum of row ``i``.
        - A class that no sample belongs to (an empty row, ``0 / 0``) gets
          ``nan``: its accuracy is unknown, and neither 0 (the model never failed
          on it) nor 1 is true. The other classes are unaffected, even when some
          prediction names the empty class.

    Example (the labels above, with a fourth class that never appears):
        >>> per_class_accuracy(pred, target, 4)
        tensor([1.0000, 0.5000, 1.0000,    nan])

    Pitfalls:
        - Clamping the denominator (``counts.sum(1).clamp(min=1)``) turns the
          unknown into a silent 0, which then drags a mean over the classes down.
          Dividing Python ints instead raises ``ZeroDivisionError``. Floating-point
          ``0. / 0.`` is already ``nan``: let it be.
        - Recall divides by the row (the samples of the class), not the column
          (the predictions of it, which is precision).
    """
    raise NotImplementedError


def top_k_accuracy(logits: torch.Tensor, target: torch.Tensor, k: int = 1) -> torch.Tensor:
    """Return the share of samples whose target is among their ``k`` highest logits.

    Spec:
        - ``logits`` is ``(N, C)`` floating point, ``target`` ``(N,)`` int64 class
          indices in ``[0, C)``.
        - A sample counts as correct when FEWER than ``k`` other classes have a
          logit greater than or EQUAL to its target's logit. A tie counts against
          the target: a model that gives every class the same logit is right on
          no sample (unless ``k = C``), not on every one.
        - A 0-d ``torch.float32`` tensor in ``[0, 1]`` on the logits' device.
          ``k = 1`` (the default) is ordinary accuracy.
        - Raise ``ValueError`` if ``k`` is not in ``[1, C]`` or there is no sample
          (``N = 0``).

    Example (sample 1's target, class 0, ties with class 1 and trails class 2):
        >>> logits = torch.tensor([[0.1, 0.5, 0.4], [0.3, 0.3, 0.4]])
        >>> target = torch.tensor([2, 0])
        >>> top_k_accuracy(logits, target), top_k_accuracy(logits, target, k=2)
        (tensor(0.), tensor(0.5000))
        >>> top_k_accuracy(logits, target, k=3)
        tensor(1.)

    Pitfall: ``logits.topk(k).indices`` is right where the logits are distinct,
    but which of several equal logits it keeps is left unspecified: here it keeps
    class 0 for sample 1 and gives 1.0 at ``k=2``. Count the classes at or above
    the target's logit instead (``gather`` it, compare, ``sum``).
    """
    raise NotImplementedError


def accuracy_over_batches(batches: list[tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
    """Return the accuracy of a whole evaluation given batch by batch.

    Spec:
        - ``batches`` is a list of ``(pred, target)`` pairs, each two 1-D int64
          tensors of one length ``n_i >= 0`` (the last batch is often shorter,
          and a batch may be empty).
        - The accuracy of the concatenation: the number of hits over every
          batch divided by the total number of samples ``N = sum of n_i``. A 0-d
          ``torch.float32`` tensor on the labels' device.
        - Raise ``ValueError`` if there is no sample at all (no batch, or only
          empty ones).

    Example (3 hits in 4, then 0 in 1):
        >>> accuracy_over_batches([(torch.tensor([0, 1, 1, 0]), torch.tensor([0, 1, 1, 1])),
        ...                        (torch.tensor([1]), torch.tensor([0]))])
        tensor(0.6000)

        The mean of the two batch accuracies, (0.75 + 0) / 2 = 0.375, weighs the
        one sample of the last batch as much as the four of the first.

    Pitfall: averaging per-batch accuracies, right only when every batch has the
    same size. Add up hits and samples, and divide once at the end.
    """
    raise NotImplementedError
