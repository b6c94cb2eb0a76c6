"""Do-nothing: raises the spec's ValueError on every call."""


def worker_items(items, worker_id, num_workers, rank=0, world_size=1):
    raise ValueError("no")


def loader_batches(items, num_workers, batch_size, rank=0, world_size=1, drop_last=False):
    raise ValueError("no")
