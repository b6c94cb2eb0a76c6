"""Every function of every drill leaves its arguments alone unless its marker's
``mutates`` says otherwise: the grading session fails any property during which a
call changed an argument (``Judge.pytest_runtest_makereport``), in every
isolation mode, also in drills without a no-mutation property of their own.
"""

from __future__ import annotations

import pytest

from grader.tests.grading import REPO, exercise, grade_properties

METRICS = "losses/metrics"
PROPERTIES = {METRICS: ["test_mae_matches_f_l1_loss", "test_pearson_matches_torch_corrcoef"]}

# The reference's mae, which takes |x - y| in x's own memory; pearson left as it is.
IN_PLACE_MAE = (REPO / "reference" / "losses" / "metrics.py").read_text().replace(
    "    return (x - y).abs().mean()", "    return x.sub_(y).abs_().mean()")


@pytest.mark.parametrize("isolation", ["none", "sandbox"])
def test_a_call_that_changes_its_argument_loses_the_property(tmp_path, isolation):
    assert "x.sub_(y)" in IN_PLACE_MAE
    submission = tmp_path / "submission"
    (submission / "losses").mkdir(parents=True)
    (submission / "losses" / "metrics.py").write_text(IN_PLACE_MAE)
    results = grade_properties(submission, tmp_path / "out", PROPERTIES, "--isolation", isolation,
                               "--no-shrink")
    tests = {t["name"]: t for t in exercise(results, METRICS)["tests"]}
    mae = tests["test_mae_matches_f_l1_loss"]
    assert mae["outcome"] == "failed", mae
    assert "changed argument 1 in place" in mae["message"] and "x.clone()" in mae["message"]
    assert tests["test_pearson_matches_torch_corrcoef"]["outcome"] == "passed"


def test_an_optimizers_own_state_is_its_to_change():
    """Adam's moments are reachable from the optimizer argument: a step may change them
    where the marker allows optimizers to change (the GAN drill's reference lost four
    properties sandboxed before they were counted as the optimizer's)."""
    import torch

    from grader.contract.arguments import Targets

    model = torch.nn.Linear(2, 1)
    opt = torch.optim.Adam(model.parameters())
    model(torch.ones(1, 2)).sum().backward()
    opt.step()
    targets = Targets.of([model, opt], {})
    moments = [t for state in opt.state.values() for t in state.values() if isinstance(t, torch.Tensor)]
    assert moments and all(targets.kind[id(t)] == "optimizers" for t in moments)
