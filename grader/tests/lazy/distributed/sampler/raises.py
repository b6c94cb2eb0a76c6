"""Do-nothing: both functions raise the spec's exception (ValueError) on every call."""


def distributed_indices(dataset_len, num_replicas, rank, *, shuffle=True, seed=0, epoch=0,
                        drop_last=False):
    raise ValueError("bad arguments")


def worker_shard(indices, worker_id, num_workers):
    raise ValueError("bad arguments")
