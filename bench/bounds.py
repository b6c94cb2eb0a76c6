"""How long the grader's bounded work on crafted student data takes: the timings
``grader/tests/test_bounds.py`` used to assert (tight time limits there failed on a
busy machine; the tests now check the bounds themselves, and the times live here).

- the static scan of 30,000 forbidden uses under a 0.2 s clock (it stops itself);
- describing a 16-dim stride-0 view of 6**16 elements (it shows at most MAX_SHOWN);
- reading a hints file that is a FIFO (it is never opened as one).

Each is run ``--repeat`` times; the median and the worst are printed. Run from the
repository root, e.g. `.tox/py3/bin/python bench/bounds.py`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's grader, not the one installed

import torch  # noqa: E402

from grader.contract.describe import describe  # noqa: E402
from grader.core import hints  # noqa: E402
from grader.grading.scan import scan_source  # noqa: E402


def timed(work: Callable[[], object], repeat: int) -> list[float]:
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        seconds.append(time.perf_counter() - start)
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    many = "import torch.nn.functional as F\n" + "\n".join(f"x{i} = F.one_hot" for i in range(30000))
    view = torch.zeros(1).expand(*([6] * 16))
    with tempfile.TemporaryDirectory() as folder:
        os.mkfifo(Path(folder) / hints.HINTS_FILE)
        cases = {
            "scan of 30,000 uses, 0.2 s clock": lambda: scan_source(many, {"F.one_hot": "scatter_"},
                                                                    seconds=0.2),
            "describe a 6**16-element view": lambda: describe(view),
            "read a hints file that is a FIFO": lambda: hints.revealed(Path(folder)),
        }
        for name, work in cases.items():
            seconds = timed(work, args.repeat)
            print(f"{name}: median {statistics.median(seconds):.3f} s, worst {max(seconds):.3f} s "
                  f"({args.repeat} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
