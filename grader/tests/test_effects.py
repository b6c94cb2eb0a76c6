"""Global state a drill may not touch is observed where the code runs, and put back.

``grader.contract.effects`` snapshots torch's global generator, default dtype, grad
mode, thread count and deterministic flag around each call; ``impl.effects`` says
what the call changed. In the sandbox the worker observes it (the grader's own state
never moved), so the kfold property that uses it fails for a submission that seeds
the global generator in every isolation mode.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from grader.contract.effects import SENTENCES, observed
from grader.core.results_json import Results
from grader.tests.grading import REPO, base_name, exercise, grade_properties
from grader.tests.shared import shared

SEEDER = REPO / "grader" / "tests" / "mutants" / "training" / "kfold" / "reseeds_global_rng.py"


def test_observed_reports_each_change_and_puts_it_back():
    before = (torch.random.get_rng_state(), torch.get_default_dtype(), torch.is_grad_enabled(),
              torch.get_num_threads())
    effects: list[str] = []
    with observed(effects):
        torch.manual_seed(1234)
        torch.set_default_dtype(torch.float64)
        torch.set_grad_enabled(False)
        torch.set_num_threads(before[3] + 1)
    assert len(effects) == 4 and set(effects) <= SENTENCES
    assert torch.equal(torch.random.get_rng_state(), before[0])
    assert (torch.get_default_dtype(), torch.is_grad_enabled(), torch.get_num_threads()) == before[1:]
    quiet: list[str] = []
    with observed(quiet):
        torch.randn(3, generator=torch.Generator().manual_seed(0))  # a generator of its own
    assert quiet == []


@pytest.mark.parametrize("isolation", ["none", "sandbox"])
def test_seeding_the_global_generator_fails_the_kfold_property(isolation, tmp_path_factory):
    def make(folder: Path) -> Results:
        target = folder / "submission" / "training" / "kfold.py"
        target.parent.mkdir(parents=True)
        target.write_text(SEEDER.read_text())
        return grade_properties(folder / "submission", folder / "out",
                                {"training/kfold": ["test_global_random_state_is_untouched",
                                                    "test_shuffled_folds_cut_the_seeded_permutation"]},
                                "--no-shrink", "--isolation", isolation)

    results = shared(tmp_path_factory, f"effects-kfold-{isolation}", make)
    outcomes = {base_name(t["name"]): t for t in exercise(results, "training/kfold")["tests"]}
    assert outcomes["test_shuffled_folds_cut_the_seeded_permutation"]["outcome"] == "passed"
    untouched = outcomes["test_global_random_state_is_untouched"]
    assert untouched["outcome"] == "failed" and "global random generator" in untouched["message"]
    assert results["environment"]["isolation"]["mode"] == isolation
