"""Course-wide test set-up: torch's RNG is seeded for every test and every example.

The ``impl`` and ``ref`` fixtures, markers and the fixed hypothesis profile come
from the grading plugin (``grader.grading.plugin``); this file holds what belongs to the
drills themselves.
"""

import pytest
import torch
from hypothesis import register_random

from tests.numerics import manual_seed


class _TorchGlobalRandom:
    """torch's global generator in the shape hypothesis reseeds per example."""

    def seed(self, seed: int) -> None:
        manual_seed(seed)

    def getstate(self) -> torch.Tensor:
        return torch.random.get_rng_state()

    def setstate(self, state: torch.Tensor) -> None:
        torch.random.set_rng_state(state)


_TORCH_RANDOM = _TorchGlobalRandom()  # register_random keeps only a weak reference
register_random(_TORCH_RANDOM)


@pytest.fixture(autouse=True)
def _seed_torch() -> None:
    manual_seed(0)
