"""Do-nothing: every worker reads the whole stream (a copy of it), and the loader yields it as
one batch: what an IterableDataset that never asks get_worker_info() does, roughly."""


def worker_items(items, worker_id, num_workers, rank=0, world_size=1):
    return list(items)


def loader_batches(items, num_workers, batch_size, rank=0, world_size=1, drop_last=False):
    return [list(items)]
