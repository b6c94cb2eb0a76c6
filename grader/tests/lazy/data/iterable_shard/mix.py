"""Mix: every ValueError the spec asks for, around do-nothing answers (the whole stream per
worker, batches of the whole stream in order as if there were one reader)."""


def _check(worker_id, num_workers, rank, world_size):
    if num_workers < 0 or not 0 <= worker_id < max(num_workers, 1):
        raise ValueError("worker")
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError("rank")


def worker_items(items, worker_id, num_workers, rank=0, world_size=1):
    _check(worker_id, num_workers, rank, world_size)
    return list(items)


def loader_batches(items, num_workers, batch_size, rank=0, world_size=1, drop_last=False):
    _check(0, num_workers, rank, world_size)
    if batch_size < 1:
        raise ValueError("batch_size")
    return [list(items[i:i + batch_size]) for i in range(0, len(items), batch_size)]
