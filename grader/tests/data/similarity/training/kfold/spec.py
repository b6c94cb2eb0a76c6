"""An independent correct kfold_indices, written from the stub's docstring alone (never the
reference): a seeded generator, tensor_split and cat."""

import torch


def kfold_indices(n, k, fold, shuffle=False, seed=0):
    if k < 2:
        raise ValueError("k must be at least 2")
    if k > n:
        raise ValueError("k must not exceed n")
    if not 0 <= fold < k:
        raise ValueError("fold must be in 0..k-1")
    if shuffle:
        g = torch.Generator().manual_seed(seed)
        order = torch.randperm(n, generator=g)
    else:
        order = torch.arange(n)
    folds = torch.tensor_split(order, k)
    valid = folds[fold]
    train = torch.cat(folds[:fold] + folds[fold + 1:])
    return train, valid
