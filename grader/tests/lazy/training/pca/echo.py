"""Do-nothing: the first k rows of x as components and its first k columns as projections."""


def pca(x, k):
    return x[:k].clone(), x[:, :k].clone()
