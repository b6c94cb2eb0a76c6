"""The learner's loop: a cold ``torchdrill check`` against one served by the warm process.

Copies the course into a temporary folder with one drill done (its reference), then, in
one run and alternating, times ROUNDS cold checks (``TORCHDRILL_WARM=0``) and ROUNDS
served by a warm server started for this run (its own ``TMPDIR``), and the import floor
(a fresh interpreter importing torch, hypothesis and pytest). Prints wall and CPU per
kind and the ratios: warm / cold wall, cold CPU / floor CPU.

    python bench/check_loop.py [--drill tensors/one_hot] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's grader, not an installed one

from grader.learner import warm  # noqa: E402


def timed(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """(wall, CPU of the children, exit code) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    code = subprocess.run(args, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drill", default="tensors/one_hot")
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="torchdrill-check-loop-") as tmp:
        course = Path(tmp) / "course"
        for name in ("tests", "exercises", "locales"):
            shutil.copytree(REPO / name, course / name, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(REPO / "course.toml", course / "course.toml")
        shutil.copy(REPO / "reference" / f"{options.drill}.py", course / "exercises" / f"{options.drill}.py")
        (Path(tmp) / "tmp").mkdir()
        env = {**os.environ, "TMPDIR": str(Path(tmp) / "tmp"), "PYTHONPATH": str(REPO), warm.ENV: "1",
               warm.IDLE_ENV: "120"}
        command = [sys.executable, "-m", "grader", "check", options.drill.rsplit("/", 1)[-1]]
        server = subprocess.Popen([sys.executable, "-m", "grader.learner.warm"], cwd=REPO, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            socket_path = Path(subprocess.run(
                [sys.executable, "-c", "from grader.learner import warm; print(warm.socket_path())"],
                cwd=REPO, env=env, capture_output=True, text=True, check=True).stdout.strip())
            while not socket_path.exists():
                time.sleep(0.1)
            runs: dict[str, list[tuple[float, float]]] = {"cold": [], "warm": [], "floor": []}
            for _ in range(options.rounds):
                wall, cpu, code = timed(command, course, {**env, warm.ENV: "0"})
                assert code == 0, "the cold check failed"
                runs["cold"].append((wall, cpu))
                wall, cpu, code = timed(command, course, env)
                assert code == 0, "the warm check failed"
                runs["warm"].append((wall, cpu))
                wall, cpu, _ = timed([sys.executable, "-c", "import torch, hypothesis, pytest"], course, env)
                runs["floor"].append((wall, cpu))
        finally:
            server.kill()
            server.wait()
    median = {kind: (statistics.median(w for w, _ in r), statistics.median(c for _, c in r))
              for kind, r in runs.items()}
    print(f"check {options.drill}, {options.rounds} rounds, medians (the warm CPU is the client's alone):")
    for kind, (wall, cpu) in median.items():
        print(f"  {kind:5}  {wall:5.2f} s wall  {cpu:5.2f} s CPU")
    print(f"warm / cold wall: {median['warm'][0] / median['cold'][0]:.2f}x; "
          f"cold CPU / import floor CPU: {median['cold'][1] / median['floor'][1]:.2f}x")


if __name__ == "__main__":
    main()
