"""Do-nothing: raises the spec's ValueError on every call."""


def batch_indices(order, batch_size, drop_last=False):
    raise ValueError("no")


def num_batches(dataset_len, batch_size, drop_last=False):
    raise ValueError("no")


def pad_collate(samples, padding_value=0):
    raise ValueError("no")
