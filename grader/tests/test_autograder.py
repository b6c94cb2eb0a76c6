"""``torchdrill gradescope-autograder``: the zip, and its real ``run_autograder`` run end
to end against a fake ``/autograder`` tree (``TORCHDRILL_AUTOGRADER_ROOT``) for a
``.py`` submission, a zip, a notebook, loose files, a submission that is none, and a
grader that fails."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from grader.intake import notebooks
from grader.tests import warm
from grader.tests.classroom import CLASS_SECRET, with_secret
from grader.tests.grading import REPO
from grader.tests.shared import shared

DRILL = "tensors/one_hot"


def reference(drill: str = DRILL) -> str:
    return (REPO / "reference" / f"{drill}.py").read_text()


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    def make(folder: Path) -> str:
        out = folder / "autograder.zip"
        proc = warm.run(["-m", "grader", "gradescope-autograder", str(out), "--course", str(REPO),
                         "--only", DRILL, "--profile", "torchdrill-quick", "--no-shrink"], REPO, 120,
                        env=with_secret())
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return str(out)

    return Path(shared(tmp_path_factory, "autograder-zip", make))


def fake_tree(root: Path, autograder_zip: Path) -> Path:
    """``/autograder`` as Gradescope lays it out: the zip unpacked in source/, run_autograder
    copied beside it, an empty submission/ folder."""
    with zipfile.ZipFile(autograder_zip) as zf:
        zf.extractall(root / "source")
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
    (root / "submission").mkdir()
    return root


def run_autograder(root: Path) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    env = {**os.environ, "TORCHDRILL_AUTOGRADER_ROOT": str(root), "TORCHDRILL_AUTOGRADER_PYTHON": sys.executable}
    proc = subprocess.run(["bash", str(root / "run_autograder")], capture_output=True, text=True,
                          timeout=300, env=env, cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads((root / "results" / "results.json").read_text()), proc


def test_the_zip_holds_the_scripts_a_wheel_and_the_course_with_its_secrets(autograder_zip, tmp_path):
    with zipfile.ZipFile(autograder_zip) as zf:
        names = set(zf.namelist())
        modes = {i.filename: stat.S_IMODE(i.external_attr >> 16) for i in zf.infolist()}
        setup = zf.read("setup.sh").decode()
        config = json.loads(zf.read("torchdrill/config.json"))
        wheel_name = next(n for n in names if n.endswith(".whl"))
        zf.extract(wheel_name, tmp_path)
    assert modes["setup.sh"] == modes["run_autograder"] == 0o755
    assert {"torchdrill/course/reference/tensors/one_hot.py", "torchdrill/course/tests/conftest.py",
            "torchdrill/course/exercises/tensors/one_hot.py", "torchdrill/course/course.toml",
            "torchdrill/constraints.txt"} <= names
    assert "torchdrill/course/tests/training/test_gan.py" in names  # hidden tests go in: graded, after_published
    assert config["drills"] == [DRILL] and config["shrink"] is False
    assert modes["torchdrill/secret"] == 0o600 and config["examples"].startswith("sha256:")
    assert CLASS_SECRET not in json.dumps(config)
    assert 'torch==2.13.0' in setup and "chmod -R go-rwx" in setup and "-c \"$SOURCE/constraints.txt\"" in setup
    subprocess.run(["bash", "-n", "-c", setup], check=True)
    with zipfile.ZipFile(tmp_path / wheel_name) as wheel:
        members = set(wheel.namelist())
        entry_points = wheel.read("torchdrill-0.1.0.dist-info/entry_points.txt").decode()
        metadata = wheel.read("torchdrill-0.1.0.dist-info/METADATA").decode()
    assert {"grader/gradescope/run.py", "grader/gradescope/facts.py", "grader/gradescope/results.py",
            "grader/authoring/templates/student_README.md.j2"} <= members
    assert not any(m.startswith("grader/tests/") for m in members)
    assert "torchdrill = grader.grading.plugin" in entry_points and "Requires-Dist: nbformat" in metadata


def test_a_py_submission_is_graded_with_every_test(autograder_zip, tmp_path):
    root = fake_tree(tmp_path, autograder_zip)
    (root / "submission" / "exercises" / "tensors").mkdir(parents=True)  # a handout folder's layout
    (root / "submission" / "exercises" / "tensors" / "one_hot.py").write_text(reference())
    result, _ = run_autograder(root)
    assert result["score"] == result["max_score"] == 10
    assert result["tests"] and all(t["status"] == "passed" for t in result["tests"])
    assert all(t["name"].startswith(f"{DRILL}: ") for t in result["tests"])
    details = json.loads((root / "results" / "torchdrill-results.json").read_text())
    assert details["environment"]["isolation"]["mode"] == "sandbox"
    assert details["environment"]["examples"]["drawn"] == "secret"  # the zip's own secret
    assert details["submission"] == "submission"


def test_a_zip_of_a_wrong_answer_is_graded_with_its_counterexamples(autograder_zip, tmp_path):
    root = fake_tree(tmp_path, autograder_zip)
    mutant = (REPO / "grader" / "tests" / "mutants" / "tensors" / "one_hot" / "float_dtype.py").read_text()
    with zipfile.ZipFile(root / "submission" / "My homework (2).zip", "w") as zf:
        zf.writestr("hw/tensors/one_hot.py", mutant)
    result, _ = run_autograder(root)
    assert 0 <= result["score"] < 10
    failed = [t for t in result["tests"] if t["status"] == "failed"]
    assert failed and any("int64" in t["output"] for t in failed)


def test_a_notebook_is_read_without_running_it_and_graded(autograder_zip, tmp_path):
    root = fake_tree(tmp_path, autograder_zip)
    marker = tmp_path / "ran"
    cells = [("markdown", "# homework"), ("code", "!pip install something"),
             ("code", reference()), ("code", f"open({str(marker)!r}, 'w').write('the cell ran')")]
    (root / "submission" / "homework.ipynb").write_text(notebooks.dumps_cells(cells))
    result, _ = run_autograder(root)
    assert result["score"] == 10
    assert not marker.exists()
    details = json.loads((root / "results" / "torchdrill-results.json").read_text())
    assert details["exercises"][0]["source"]["functions"] == [{"name": "one_hot", "cell": 3, "line": 6}]
    assert "Read from your notebook homework.ipynb" in result["output"]
    assert "tensors/one_hot: one_hot() cell 3, line 6" in result["output"]


def test_loose_drill_files_are_put_where_they_belong(tmp_path):
    """Uploading files one by one gives ``one_hot.py`` at the top (found without grading)."""
    from grader.intake.submission import Kind, open_submission

    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "one_hot.py").write_text(reference())
    (tmp_path / "submission" / "notes.md").write_text("my notes")
    submission = open_submission(tmp_path / "submission", REPO, student="submission")
    assert submission.kind is Kind.LOOSE
    assert dict(submission.files) == {f"{DRILL}.py": reference().encode()}


def test_a_submission_without_drills_scores_zero_and_says_why(autograder_zip, tmp_path):
    root = fake_tree(tmp_path, autograder_zip)
    (root / "submission" / "notes.txt").write_text("I did not do it")
    result, _ = run_autograder(root)
    assert result["score"] == 0 and result["extra_data"]["torchdrill"] == "not_gradable"
    assert "could not be graded" in result["output"] and "tensors/one_hot.py" in result["output"]


def test_a_grader_that_fails_gives_a_message_and_no_score(autograder_zip, tmp_path):
    root = fake_tree(tmp_path, autograder_zip)
    (root / "submission" / "one_hot.py").write_text(reference())
    conftest = root / "source" / "torchdrill" / "course" / "tests" / "conftest.py"
    conftest.write_text("raise RuntimeError('the course is broken')\n")
    result, _ = run_autograder(root)
    assert "score" not in result and result["extra_data"]["torchdrill"] == "grader_failed"
    assert "not with your work" in result["output"]
    broken = fake_tree(tmp_path / "no-python", autograder_zip)
    env = {**os.environ, "TORCHDRILL_AUTOGRADER_ROOT": str(broken),
           "TORCHDRILL_AUTOGRADER_PYTHON": str(tmp_path / "no-such-python")}
    subprocess.run(["bash", str(broken / "run_autograder")], check=True, env=env, capture_output=True)
    result = json.loads((broken / "results" / "results.json").read_text())  # the script's own fallback
    assert "score" not in result and result["extra_data"]["torchdrill"] == "grader_failed"
