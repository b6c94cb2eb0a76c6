"""Do-nothing: every function raises the spec's exception (ValueError) on every call."""


def attention(query, key, value, mask=None):
    raise ValueError("no attention here")


def subsequent_mask(size):
    raise ValueError("no mask here")


def padding_mask(lengths, max_len):
    raise ValueError("a length is out of range")
