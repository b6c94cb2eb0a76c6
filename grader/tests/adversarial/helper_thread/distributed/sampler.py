"""Attack: run the forbidden ``DistributedSampler`` in a helper thread, where a guard that
watches only the calling thread (a profile hook, a mode) sees nothing; ``worker_shard``
is not attempted.
"""

import threading

from torch.utils.data import DistributedSampler


def distributed_indices(dataset_len, num_replicas, rank, *, shuffle=True, seed=0, epoch=0,
                        drop_last=False):
    out = {}

    def run():
        try:
            sampler = DistributedSampler(range(dataset_len), num_replicas=num_replicas, rank=rank,
                                         shuffle=shuffle, seed=seed, drop_last=drop_last)
            sampler.set_epoch(epoch)
            out["indices"] = [int(i) for i in sampler]
        except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread
            out["error"] = exc

    helper = threading.Thread(target=run)
    helper.start()
    helper.join()
    if "error" in out:
        raise out["error"]
    return out["indices"]


def worker_shard(indices, worker_id, num_workers):
    raise NotImplementedError
