"""Do-nothing: returns (a copy of) the first tensor it was given."""


def index_select(x, dim, index):
    return x.clone()


def masked_select(x, mask):
    return x.reshape(-1).clone()


def take(x, index):
    return x.reshape(-1).clone()


def where(condition, x, y):
    return x.clone()


def index_fill(x, dim, index, value):
    return x.clone()
