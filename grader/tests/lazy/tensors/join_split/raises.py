"""Do-nothing: raises the spec's ValueError on every call."""


def stack(tensors, dim=0):
    raise ValueError("no")


def cat(tensors, dim=0):
    raise ValueError("no")


def split(x, split_size_or_sections, dim=0):
    raise ValueError("no")


def chunk(x, chunks, dim=0):
    raise ValueError("no")
