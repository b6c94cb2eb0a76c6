"""What the sandbox costs: the reference graded in-process and sandboxed, back to back.

Prints, from one run (the machine is noisy, so compare ratios, not seconds):

- the wall time of ``torchdrill grade reference`` with ``--isolation none`` and with
  ``--isolation sandbox`` (every confinement layer this machine has), and their
  ratio (the issue's target: at most 1.3x);
- the start of a worker after the first (fork from the zygote, confinement, first
  answer): median and max of 30 (target: a median of at most 50 ms);
- the round trip of one small call, in-process and sandboxed (median of 500).

Run from the repository root with torchdrill installed, e.g.
`.tox/py3/bin/python bench/sandbox.py [-n 2]`.
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

from grader import remote
from grader.forbid import Forbidden
from grader.impl import Implementation
from grader.results import verdicts

REPO = Path(__file__).resolve().parents[1]


def grade(out: Path, workers: int, isolation: str) -> tuple[float, dict]:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "grader", "grade", "reference", "--out", str(out),
                    "-n", str(workers), "--isolation", isolation],
                   cwd=REPO, check=True, capture_output=True)
    return time.perf_counter() - start, json.loads((out / "results.json").read_text())


def worker_starts(sandbox: remote.Sandbox, n: int = 30) -> list[float]:
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
    workers = parser.parse_args().workers
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        plain_s, plain = grade(root / "none", workers, "none")
        boxed_s, boxed = grade(root / "sandbox", workers, "sandbox")
        submission = root / "submission" / "tensors"
        submission.mkdir(parents=True)
        shutil.copy(REPO / "reference" / "tensors" / "one_hot.py", submission)
        forbidden = Forbidden.from_marker({"F.one_hot": "scatter ones"})
        sandbox = remote.sandbox_for(submission.parent, "sandbox")
        starts = worker_starts(sandbox)
        local = round_trips(Implementation(submission.parent, "tensors/one_hot", forbidden))
        far = round_trips(remote.SandboxedImplementation(submission.parent, "tensors/one_hot",
                                                         forbidden, sandbox))
        layers = sandbox.report()["layers"]
        remote.close_all()
    assert verdicts(plain) == verdicts(boxed), "the sandbox changed a property's verdict"
    ms = 1e3
    print(f"reference, -n {workers}; sandbox layers: "
          + ", ".join(f"{k} {v}" for k, v in layers.items()))
    print(f"{'grading':<22}{'wall s':>8}{'score':>10}")
    print(f"{'--isolation none':<22}{plain_s:>8.1f}{plain['score']:>10g}")
    print(f"{'--isolation sandbox':<22}{boxed_s:>8.1f}{boxed['score']:>10g}")
    print(f"sandboxed / in-process: {boxed_s / plain_s:.2f}x (target <= 1.3x)")
    print(f"worker start after the first: median {statistics.median(starts) * ms:.1f} ms, "
          f"max {max(starts) * ms:.1f} ms over {len(starts)} (target: median <= 50 ms)")
    print(f"one small call (one_hot of 3 labels): in-process {statistics.median(local) * ms:.3f} ms, "
          f"sandboxed {statistics.median(far) * ms:.3f} ms (medians of {len(far)})")


if __name__ == "__main__":
    main()
