"""Do-nothing: empty lists (the constant content of a list answer)."""


def distributed_indices(dataset_len, num_replicas, rank, *, shuffle=True, seed=0, epoch=0,
                        drop_last=False):
    return []


def worker_shard(indices, worker_id, num_workers):
    return []
