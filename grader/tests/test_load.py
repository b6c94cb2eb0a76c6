"""Same submission, same results.json on a quiet or a loaded machine.

Drill budgets leave out the time a grading waits for a CPU (the run-queue delay the
kernel keeps for the grader's and its sandbox workers' threads: ``grader.sandbox.clock``):
processes burning CPU beside a grading stretch its wall time, not what it is charged.
The budget here is set where a wall-clock budget ran out under the load and the
charged one does not.
"""

from __future__ import annotations

import subprocess
import sys

from grader.tests.grading import REPO, outcomes_only, run_grade
from grader.tests.test_determinism import half_done

DRILLS = ("tensors/broadcast",)
BURNERS = 6  # on two cores: the grading gets about two sevenths of a core, its wall time 3.5x
BUDGET_S = "3"  # above the drill's charged time here, below its wall time under the burners' load
# Every core, whatever this process is pinned to (the sandbox keeps a grading on one core),
# and a session of its own: with the kernel's autogroup scheduling, CPU is shared between
# sessions, so burners in one session would take one share however many there are.
BURN = ("import os, time\nos.setsid()\nos.sched_setaffinity(0, range(os.cpu_count()))\n"
        "end = time.monotonic() + 600\nwhile time.monotonic() < end:\n    pass\n")


def test_a_loaded_machine_gives_the_same_results(tmp_path):
    submission = half_done(tmp_path / "half_done")
    args = ("--only", *DRILLS, "--isolation", "sandbox", "--drill-budget", BUDGET_S)
    quiet = run_grade(submission, tmp_path / "quiet", *args)
    burners = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(BURNERS)]
    try:
        loaded = run_grade(submission, tmp_path / "loaded", *args)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    assert outcomes_only(loaded) == outcomes_only(quiet)
    outcomes = {t["outcome"] for e in quiet["exercises"] for t in e["tests"]}
    assert {"passed", "failed"} <= outcomes and "timed_out" not in outcomes



def test_a_spent_budget_leaves_a_cuda_test_not_run(tmp_path):
    """Hardware this machine lacks is decided before any budget: 'not run here' (out of
    the maximum), never a timed-out zero."""
    results = run_grade(REPO / "reference", tmp_path, "--only", "tensors/padding", "--isolation", "none",
                        "--drill-budget", "0.01")
    tests = results["exercises"][0]["tests"]
    cuda = [t for t in tests if "cuda" in t["markers"]]
    assert cuda and all(t["outcome"] == "not_run" for t in cuda)
    others = {t["outcome"] for t in tests if t not in cuda}  # a first property may end inside 0.01 s
    assert "timed_out" in others and others <= {"timed_out", "passed"}
