"""Global state a drill's function may not touch, observed where the function runs.

``observed(effects)`` snapshots torch's global random generator, the default
dtype, grad mode, the intra-op thread count and the deterministic-algorithms
flag around a call, appends to ``effects`` a sentence for each that the call
changed, and puts every one back. The snapshot is taken in the process that runs
the student's code: the grader's for in-process grading, the worker's in the
sandbox (which reports the sentences with its answer), so a property such as
"the global random state is untouched" means the same in every isolation mode,
and a call that changes the state cannot steer the oracles or the calls after it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

# name -> (what the report says, how to read it, how to put it back)
_STATE: dict[str, tuple[str, Any, Any]] = {
    "rng": ("torch's global random generator (torch.manual_seed, or a draw without a "
            "generator of your own)", torch.random.get_rng_state, torch.random.set_rng_state),
    "default_dtype": ("the default dtype (torch.set_default_dtype)", torch.get_default_dtype,
                      torch.set_default_dtype),
    "grad_mode": ("grad mode (torch.set_grad_enabled / no_grad left on)", torch.is_grad_enabled,
                  torch.set_grad_enabled),
    "threads": ("torch's thread count (torch.set_num_threads)", torch.get_num_threads,
                torch.set_num_threads),
    "deterministic": ("the deterministic-algorithms flag (torch.use_deterministic_algorithms)",
                      torch.are_deterministic_algorithms_enabled, torch.use_deterministic_algorithms),
}
SENTENCES = frozenset(sentence for sentence, _, _ in _STATE.values())


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.shape == b.shape and bool(torch.equal(a, b))
    return bool(a == b)


@contextmanager
def observed(effects: list[str]) -> Iterator[None]:
    """Run the block; append to ``effects`` what it changed of the global state, and
    restore it (see the module docstring)."""
    before = {name: read() for name, (_, read, _) in _STATE.items()}
    try:
        yield
    finally:
        for name, (sentence, read, write) in _STATE.items():
            if not _same(read(), before[name]):
                effects.append(sentence)
                write(before[name])
