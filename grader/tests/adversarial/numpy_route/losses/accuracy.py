"""Attack: do the forbidden counting in numpy, torch.bincount by another name.

Every function hands its labels to numpy as plain numbers (``tolist``, which the drill
allows) and counts there: ``np.bincount`` for the confusion matrix, ``np.argsort`` for
top-k, ``np.mean`` over batches. A drill that forbids an API forbids numpy too: its
attributes are refused to the call, in-process and in a worker, whichever way it was
imported.
"""

import numpy as np
import torch


def confusion_matrix(pred, target, num_classes):
    flat = np.bincount([t * num_classes + p for t, p in zip(target.tolist(), pred.tolist())],
                       minlength=num_classes * num_classes)
    return torch.tensor(flat.tolist(), dtype=torch.int64).reshape(num_classes, num_classes)


def per_class_accuracy(pred, target, num_classes):
    counts = confusion_matrix(pred, target, num_classes).to(torch.float32)
    return counts.diagonal() / counts.sum(dim=1)


def top_k_accuracy(logits, target, k=1):
    order = np.argsort([[-v for v in row] for row in logits.tolist()], axis=1, kind="stable")[:, :k]
    hits = [t in row for t, row in zip(target.tolist(), order.tolist())]
    return torch.tensor(float(np.mean(hits)) if hits else float("nan"))


def accuracy_over_batches(batches):
    right = [p == t for pred, target in batches for p, t in zip(pred.tolist(), target.tolist())]
    return torch.tensor(float(np.mean(right)))
