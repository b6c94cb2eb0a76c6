"""Do-nothing: raises ValueError on every call."""


def masked_copy(module, mask, persistent=True):
    raise ValueError("no")


def split_state(model):
    raise ValueError("no")


def strip_prefix(state, prefix):
    raise ValueError("no")
