"""Do-nothing: hands back what it was given (the first tensor; x whole, as the only piece)."""


def stack(tensors, dim=0):
    return tensors[0]


def cat(tensors, dim=0):
    return tensors[0]


def split(x, split_size_or_sections, dim=0):
    return (x,)


def chunk(x, chunks, dim=0):
    return (x,)
