"""Do-nothing: each function hands back (a reshaping of) its input."""

import torch


def confusion_matrix(pred, target, num_classes):
    return pred


def per_class_accuracy(pred, target, num_classes):
    return pred.float()


def top_k_accuracy(logits, target, k=1):
    return logits


def accuracy_over_batches(batches):
    return batches[0][0] if batches else torch.zeros(0)
