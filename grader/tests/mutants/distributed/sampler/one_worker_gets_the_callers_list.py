"""Mistake: with one worker, worker_shard hands back the caller's own list ("it loads
everything anyway"): the caller and the DataLoader worker then share one list, and a change
to either (a shuffle, an append) changes the other. The spec asks for a new list."""

import math

import torch

CAUGHT_BY = ("test_worker_shards_are_strided_and_in_order",)


def _check_range(name: str, value: int, stop: int) -> None:
    if not 0 <= value < stop:
        raise ValueError(f"{name} must be in [0, {stop}), got {value}")


def distributed_indices(dataset_len: int, num_replicas: int, rank: int, *,
                        shuffle: bool = True, seed: int = 0, epoch: int = 0,
                        drop_last: bool = False) -> list[int]:
    if num_replicas < 1:
        raise ValueError(f"num_replicas must be at least 1, got {num_replicas}")
    _check_range("rank", rank, num_replicas)
    if dataset_len < 0:
        raise ValueError(f"dataset_len must be non-negative, got {dataset_len}")
    if shuffle:
        generator = torch.Generator()
        generator.manual_seed(seed + epoch)
        order = torch.randperm(dataset_len, generator=generator).tolist()
    else:
        order = list(range(dataset_len))
    if drop_last:
        num_samples = dataset_len // num_replicas  # the uneven tail is cut below
    else:
        num_samples = math.ceil(dataset_len / num_replicas)  # padded below
    total = num_samples * num_replicas
    padded = [order[i % dataset_len] for i in range(total)]  # repeats from the start, or cuts
    return padded[rank::num_replicas]


def worker_shard(indices: list[int], worker_id: int, num_workers: int) -> list[int]:
    if num_workers < 1:
        raise ValueError(f"num_workers must be at least 1, got {num_workers}")
    _check_range("worker_id", worker_id, num_workers)
    if num_workers == 1:  # one worker loads everything
        return indices
    return list(indices[worker_id::num_workers])
