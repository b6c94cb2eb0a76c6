"""An independent correct knn_predict, written from the stub's docstring alone (never the
reference): one query at a time, a stable sort of the distances, bincount and max."""

import torch


def knn_predict(train_x, train_y, queries, k):
    if k < 1 or k > len(train_x):
        raise ValueError("need 1 <= k <= number of training points")
    size = int(train_y.max().item()) + 1
    answers = []
    for q in queries:
        gaps = train_x - q
        d2 = (gaps * gaps).sum(dim=1)
        order = torch.sort(d2, stable=True).indices[:k]
        tally = torch.bincount(train_y[order], minlength=size)
        best = int(tally.max())
        answers.append(int((tally == best).nonzero()[0]))
    return torch.tensor(answers, dtype=torch.int64, device=train_x.device)
