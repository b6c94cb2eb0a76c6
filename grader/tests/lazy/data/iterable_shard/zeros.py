"""Do-nothing: nothing read, no batches."""


def worker_items(items, worker_id, num_workers, rank=0, world_size=1):
    return []


def loader_batches(items, num_workers, batch_size, rank=0, world_size=1, drop_last=False):
    return []
