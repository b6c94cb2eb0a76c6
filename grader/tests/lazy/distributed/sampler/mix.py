"""Do-nothing, the best per function: both check their arguments (ValueError);
distributed_indices gives every rank index 0 repeated to the right length, worker_shard the
first len(shard) indices it was given, in order."""


def distributed_indices(dataset_len, num_replicas, rank, *, shuffle=True, seed=0, epoch=0,
                        drop_last=False):
    if num_replicas < 1 or not 0 <= rank < num_replicas or dataset_len < 0:
        raise ValueError("bad arguments")
    if drop_last:
        return [0] * (dataset_len // num_replicas)
    return [0] * (-(-dataset_len // num_replicas))


def worker_shard(indices, worker_id, num_workers):
    if num_workers < 1 or not 0 <= worker_id < num_workers:
        raise ValueError("bad arguments")
    return list(indices[:len(indices[worker_id::num_workers])])
