"""Mistake: pads the order with at most one copy of itself, as DistributedSampler did up to
PyTorch 1.7 (``indices += indices[:total_size - len(indices)]``): right whenever the dataset
has at least half as many indices as there are ranks, but 2 indices over 5 ranks become
``a b a b`` instead of ``a b a b a``, and rank 4 gets nothing (found by grading real code
from public repositories: issue 27; the draw met it on 1.7% of examples)."""

import math

import torch

CAUGHT_BY = ("test_matches_distributed_sampler", "test_ranks_together_cover_the_dataset",
             "test_every_rank_gets_the_same_number_of_indices")


def distributed_indices(dataset_len: int, num_replicas: int, rank: int, *,
                        shuffle: bool = True, seed: int = 0, epoch: int = 0,
                        drop_last: bool = False) -> list[int]:
    if num_replicas < 1:
        raise ValueError(f"num_replicas must be at least 1, got {num_replicas}")
    if not 0 <= rank < num_replicas:
        raise ValueError(f"rank must be in [0, {num_replicas}), got {rank}")
    if dataset_len < 0:
        raise ValueError(f"dataset_len must be non-negative, got {dataset_len}")
    if shuffle:
        generator = torch.Generator()
        generator.manual_seed(seed + epoch)
        indices = torch.randperm(dataset_len, generator=generator).tolist()
    else:
        indices = list(range(dataset_len))
    if drop_last:
        num_samples = dataset_len // num_replicas
    else:
        num_samples = math.ceil(dataset_len / num_replicas)
    total_size = num_samples * num_replicas
    if not drop_last:
        indices += indices[:(total_size - len(indices))]
    else:
        indices = indices[:total_size]
    return indices[rank:total_size:num_replicas]


def worker_shard(indices: list[int], worker_id: int, num_workers: int) -> list[int]:
    if num_workers < 1:
        raise ValueError(f"num_workers must be at least 1, got {num_workers}")
    if not 0 <= worker_id < num_workers:
        raise ValueError(f"worker_id must be in [0, {num_workers}), got {worker_id}")
    return list(indices[worker_id::num_workers])
