"""Do-nothing: attention returns (value, key) as (output, p_attn); the masks return what they
were given."""


def attention(query, key, value, mask=None):
    return value, key


def subsequent_mask(size):
    return size


def padding_mask(lengths, max_len):
    return lengths
