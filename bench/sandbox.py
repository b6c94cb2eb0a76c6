"""What the sandbox costs: the reference graded in-process and sandboxed, back to back.

Prints, from one run (the machine is noisy, so compare ratios, not seconds):

- the wall time of ``torchdrill grade reference`` with ``--isolation none`` and with
  ``--isolation sandbox`` (every confinement layer this machine has), and their
  ratio (the issue's target: at most 1.3x). ``--pairs K`` grades K such pairs,
  back to back, the sandboxed one first in every other pair (a machine that slows
  down during the run then weighs on both sides alike), and prints every pair's
  ratio and their median;
- the start of a worker after the first (fork from the zygote, confinement, first
  answer): median and max of 30 (target: a median of at most 50 ms);
- the round trip of one small call, in-process and sandboxed (median of 500).

Run from the repository root with torchdrill installed, e.g.
`.tox/py3/bin/python bench/sandbox.py [-n 2] [--pairs 3]`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's grader, not the one installed

from grader.contract.forbid import Forbidden  # noqa: E402
from grader.contract.impl import Implementation  # noqa: E402
from grader.core.results_json import Results, verdicts  # noqa: E402
from grader.sandbox import sandboxed_impl, sandboxes  # noqa: E402


def grade(out: Path, workers: int, isolation: str) -> tuple[float, Results]:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "grader", "grade", "reference", "--out", str(out),
                    "-n", str(workers), "--isolation", isolation],
                   cwd=REPO, check=True, capture_output=True)
    return time.perf_counter() - start, json.loads((out / "results.json").read_text())


def worker_starts(sandbox: sandboxes.Sandbox, n: int = 30) -> list[float]:
    sandbox.fork("tensors/one_hot", {}).kill()  # the first: not counted
    times = []
    for _ in range(n):
        start = time.perf_counter()
        worker = sandbox.fork("tensors/one_hot", {})
        times.append(time.perf_counter() - start)
        worker.kill()
    return times


def round_trips(impl: Implementation, n: int = 500) -> list[float]:
    labels = torch.tensor([0, 2, 1])
    impl.one_hot(labels)
    times = []
    for _ in range(n):
        start = time.perf_counter()
        impl.one_hot(labels)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--workers", type=int, default=0)
    parser.add_argument("--pairs", type=int, default=1, metavar="K",
                        help="grade K in-process/sandboxed pairs (default 1)")
    options = parser.parse_args()
    workers = options.workers
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        pairs = []
        for k in range(options.pairs):
            order = ("none", "sandbox") if k % 2 == 0 else ("sandbox", "none")
            timed = {mode: grade(root / f"{mode}-{k}", workers, mode) for mode in order}
            pairs.append((timed["none"], timed["sandbox"]))
            print(f"pair {k + 1}: in-process {timed['none'][0]:.1f} s, sandboxed "
                  f"{timed['sandbox'][0]:.1f} s: {timed['sandbox'][0] / timed['none'][0]:.2f}x",
                  flush=True)
        submission = root / "submission" / "tensors"
        submission.mkdir(parents=True)
        shutil.copy(REPO / "reference" / "tensors" / "one_hot.py", submission)
        forbidden = Forbidden.from_marker({"F.one_hot": "scatter ones"})
        sandbox = sandboxes.sandbox_for(submission.parent, "sandbox")
        starts = worker_starts(sandbox)
        local = round_trips(Implementation(submission.parent, "tensors/one_hot", forbidden))
        far = round_trips(sandboxed_impl.SandboxedImplementation(submission.parent, "tensors/one_hot",
                                                                 forbidden, sandbox))
        layers = sandbox.report()["layers"]
        sandboxes.close_all()
    for (_, plain), (_, boxed) in pairs:
        assert verdicts(plain) == verdicts(boxed), "the sandbox changed a property's verdict"
    ms = 1e3
    print(f"reference, -n {workers}; sandbox layers: "
          + ", ".join(f"{k} {v}" for k, v in layers.items()))
    print(f"score: {pairs[0][0][1]['score']:g} in-process and sandboxed, the same verdict per property")
    ratios = [b[0] / p[0] for p, b in pairs]
    print(f"sandboxed / in-process: {statistics.median(ratios):.2f}x (target <= 1.3x)"
          + (f", the median of {len(ratios)} pairs: "
             + " ".join(f"{r:.2f}x" for r in ratios) if len(ratios) > 1 else ""))
    print(f"worker start after the first: median {statistics.median(starts) * ms:.1f} ms, "
          f"max {max(starts) * ms:.1f} ms over {len(starts)} (target: median <= 50 ms)")
    print(f"one small call (one_hot of 3 labels): in-process {statistics.median(local) * ms:.3f} ms, "
          f"sandboxed {statistics.median(far) * ms:.3f} ms (medians of {len(far)})")


if __name__ == "__main__":
    main()
