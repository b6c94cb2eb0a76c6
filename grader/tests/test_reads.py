"""Each submission file is read from disk once per grading: the intake reads it, and the
sandbox's copy, the in-process import and the static scan take those very bytes (the bytes
checked are the bytes graded). An audit hook in a fresh process counts the opens."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.tests.grading import REPO

DRILLS = ("tensors/one_hot", "tensors/contiguity")

_COUNT_OPENS = r"""
import json, os, sys
from collections import Counter
from pathlib import Path

folder = Path(sys.argv[1]).resolve()
opens = Counter()

def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.fsdecode(args[0])
        if path.endswith(".py") and os.path.abspath(path).startswith(str(folder) + os.sep):
            opens[os.path.relpath(os.path.abspath(path), folder)] += 1

from grader.core.isolation import Isolation
from grader.grading.pipeline import grade
from grader.grading.request import GradingRequest
from grader.intake.submission import open_submission

course = Path(sys.argv[2])
out = {}
sys.addaudithook(hook)
for mode in sys.argv[3:]:
    opens.clear()
    request = GradingRequest(course=course, isolation=Isolation(mode), only=tuple(json.loads(os.environ["DRILLS"])),
                             profile="torchdrill-quick", shrink=False)
    results = grade(request, open_submission(folder, course))
    out[mode] = {"opens": dict(opens), "score": results["score"], "max": results["max_score"]}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def submission(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("reads") / "submission"
    for drill in DRILLS:
        (folder / drill).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / "reference" / f"{drill}.py", folder / f"{drill}.py")
    return folder


def test_each_file_is_read_once_per_grading_in_process_and_sandboxed(submission: Path) -> None:
    done = subprocess.run([sys.executable, "-c", _COUNT_OPENS, str(submission), str(REPO), "none", "sandbox"],
                          capture_output=True, text=True, timeout=600, env=_env())
    assert done.returncode == 0, done.stderr[-3000:]
    graded = json.loads(done.stdout.strip().splitlines()[-1])
    files = {f"{d}.py" for d in DRILLS}
    for mode, seen in graded.items():
        assert seen["score"] == seen["max"] > 0, (mode, seen)  # graded in full, from the bytes read once
        assert seen["opens"] == dict.fromkeys(files, 1), (mode, seen["opens"])


def _env() -> dict[str, str]:
    import os
    return {**os.environ, "DRILLS": json.dumps(DRILLS)}
