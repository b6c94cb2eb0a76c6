"""Do-nothing: zeros of the right shape, dtype and device everywhere."""

import torch


def confusion_matrix(pred, target, num_classes):
    return torch.zeros(num_classes, num_classes, dtype=torch.int64, device=pred.device)


def per_class_accuracy(pred, target, num_classes):
    return torch.zeros(num_classes, dtype=torch.float32, device=pred.device)


def top_k_accuracy(logits, target, k=1):
    return torch.zeros((), dtype=torch.float32, device=logits.device)


def accuracy_over_batches(batches):
    return torch.zeros((), dtype=torch.float32)
