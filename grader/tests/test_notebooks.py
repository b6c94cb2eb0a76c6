"""Notebook submissions: reading a notebook's cells into exercise files without running
them (``grader.intake.notebooks``), notebooks among a class's submissions, and the claim
that a notebook and the same code as ``.py`` files get the same results."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest

from grader.core.results_json import Results
from grader.core.syllabus import exercise_tests
from grader.intake import cell_lines, notebooks, reader
from grader.tests import warm
from grader.tests.grading import REPO, outcomes_only

STUBS = notebooks.drill_functions(REPO, list(exercise_tests(REPO)))
ONLY = ["tensors/one_hot", "tensors/contiguity", "tensors/padding"]
IDS = list(exercise_tests(REPO))


def reference(drill: str) -> str:
    return (REPO / "reference" / f"{drill}.py").read_text()


def nb(*cells: str | tuple[str, str]) -> bytes:
    return notebooks.dumps_cells([c if isinstance(c, tuple) else ("code", c) for c in cells]).encode()


def extract(*cells: str | tuple[str, str]) -> notebooks.Extraction:
    return notebooks.extract("hw.ipynb", nb(*cells), STUBS)


def text(extraction: notebooks.Extraction, drill: str) -> str:
    return extraction.files[f"{drill}.py"].decode()


# ------------------------------------------------------------------ reading cells

def test_only_imports_definitions_and_constants_are_kept_and_nothing_runs():
    found = extract(("markdown", "# my work"),
                    "!pip install torchdrill\n%matplotlib inline\nimport torch\nimport matplotlib.pyplot as plt\n"
                    "from grader.learner.notebook import check\nopen('/tmp/pwned', 'w').write('x')",
                    "SCALE = 2 ** 3\nDATA = torch.arange(3)  # a call: not a constant\n"
                    "def _double(x):\n    return x * SCALE\n"
                    "def one_hot(labels, num_classes=-1):\n    return _double(labels)\n"
                    "print(one_hot(torch.tensor([1])))\ncheck('one_hot')\nfor i in range(3):\n    pass")
    code = text(found, "tensors/one_hot")
    assert "import torch" not in code  # one_hot's code does not use torch
    assert "plt" not in code and "grader" not in code and "pip" not in code
    assert "open(" not in code and "print(" not in code and "check(" not in code and "DATA" not in code
    assert "SCALE = 2 ** 3" in code and "def _double" in code and "def one_hot" in code
    compile(code, "one_hot.py", "exec")
    assert found.functions["tensors/one_hot"] == [notebooks.Origin("one_hot", 3, 5)]
    assert set(found.files) == {"tensors/one_hot.py"}  # no other drill's function: no other file


def test_the_last_definition_counts_and_missing_functions_come_from_the_stub():
    found = extract("def is_contiguous(size, stride):\n    return 'first'\n",
                    "import torch\n\ndef is_contiguous(size, stride):\n    return torch.tensor(1).item() == 1\n")
    code = text(found, "tensors/contiguity")
    assert "'first'" not in code and code.count("def is_contiguous") == 1
    assert found.functions["tensors/contiguity"] == [notebooks.Origin("is_contiguous", 2, 3)]
    assert found.stubbed["tensors/contiguity"] == ["contiguous_strides"]
    assert "def contiguous_strides" in code and "raise NotImplementedError" in code
    compile(code, "contiguity.py", "exec")


def test_magics_keep_line_numbers_and_cell_magics_that_are_not_python_are_skipped():
    python, _ = notebooks.clean_magics("x = 1\n!ls\n  %time f()\nfiles = !ls\nhelp?\ny = a != b\nz %= 2")
    assert python is not None
    assert python.split("\n") == ["x = 1", "pass", "  pass", "pass", "pass", "y = a != b", "z %= 2"]
    assert notebooks.clean_magics("%%bash\necho hi")[0] is None
    python_as_is = 'text = ("%d drills"\n        % 3)\nwhat = "why?"\n'
    assert notebooks.clean_magics(python_as_is)[0] == python_as_is
    assert notebooks.clean_magics("%%time\nx = 1")[0] == "\nx = 1"


def test_a_cell_that_does_not_parse_is_an_error_naming_cell_and_line_unless_defined_again():
    broken = "import torch\n\ndef one_hot(labels, num_classes=-1:\n    return labels\n"
    found = extract("x = 1", broken)
    assert "cell 2 of hw.ipynb does not parse (line 3 of the cell" in found.broken["tensors/one_hot"]
    assert "one_hot() cannot be graded" in found.broken["tensors/one_hot"]
    assert "raise SyntaxError" in text(found, "tensors/one_hot")
    fixed = extract(broken, reference("tensors/one_hot"))
    assert "tensors/one_hot" not in fixed.broken and "scatter_" in text(fixed, "tensors/one_hot")


def test_what_is_not_a_notebook_is_refused_with_its_reason():
    with pytest.raises(notebooks.NotebookProblem, match="hw.ipynb is not a Jupyter notebook"):
        notebooks.extract("hw.ipynb", b"{not json", STUBS)
    with pytest.raises(notebooks.NotebookProblem, match="hw.ipynb is not a (readable )?Jupyter notebook"):
        notebooks.extract("hw.ipynb", json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                                                  "cells": {"a": 1}}).encode(), STUBS)
    deep = "x = " + "(" * 2000 + ")" * 2000  # too deep for ast: counted as not parsing, never raised
    assert notebooks.extract("hw.ipynb", nb(deep), STUBS).files == {}


def test_annotate_records_cells_and_maps_lines_in_messages():
    found = extract("import torch", reference("tensors/one_hot"))
    info = json.loads(json.dumps(found.as_json()))
    line = next(first for first, _, cell, _ in info["line_map"]["tensors/one_hot"] if cell == 2) + 2
    results: dict[str, Any] = {"exercises": [{"id": "tensors/one_hot", "static_flags": [{"line": line}], "tests": [
        {"message": f'boom\n  File "alice/tensors/one_hot.py", line {line}, in one_hot'}]}]}
    cell_lines.annotate(results, info)
    ex = results["exercises"][0]
    assert ex["source"]["functions"] == [{"name": "one_hot", "cell": 2, "line": 6}]
    assert ex["static_flags"][0]["cell"] == 2
    message = ex["tests"][0]["message"]
    assert re.search(r'File "hw.ipynb", cell 2, line \d+, in one_hot', message) and "one_hot.py" not in message


# ------------------------------------------------------------------ among a class's submissions

def test_notebooks_are_submissions_in_a_class_folder(tmp_path):
    (tmp_path / "alice.ipynb").write_bytes(nb(reference("tensors/one_hot")))
    (tmp_path / "bob").mkdir()
    (tmp_path / "bob" / "work.ipynb").write_bytes(nb(reference("tensors/padding")))
    (tmp_path / "carol").mkdir()
    for name in ("a.ipynb", "b.ipynb"):
        (tmp_path / "carol" / name).write_bytes(nb("x = 1"))
    with zipfile.ZipFile(tmp_path / "dave.zip", "w") as zf:
        zf.writestr("dave/exercises/hw.ipynb", nb(reference("tensors/contiguity")))
    (tmp_path / "erin.ipynb").write_bytes(nb("print('no drill here')"))
    entries = {e.student: e for e in reader.discover(tmp_path, IDS)}
    assert (entries["alice"].kind, entries["alice"].notebook) == ("notebook", "alice.ipynb")
    assert entries["bob"].notebook == "work.ipynb" and entries["bob"].problem is None
    assert "2 notebooks" in (entries["carol"].problem or "")
    assert entries["dave"].notebook == "dave/exercises/hw.ipynb"
    assert set(reader.notebook(entries["dave"], STUBS).files) == {"tensors/contiguity.py"}
    assert set(reader.notebook(entries["alice"], STUBS).files) == {"tensors/one_hot.py"}
    with pytest.raises(reader.SubmissionProblem, match="no cell of erin.ipynb defines a drill's function"):
        reader.notebook(entries["erin"], STUBS)


# ------------------------------------------------------------------ the same results either way

def _grade(submission: Path, out: Path) -> Results:
    proc = warm.run(["-m", "grader", "grade", str(submission), "--out", str(out), "--course", str(REPO),
                     "--only", *ONLY, "--profile", "torchdrill-quick", "--no-shrink"], REPO, 300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads((out / "results.json").read_text())


def _comparable(results: Results, folder: Path | None = None) -> dict:
    """What must be identical: every outcome, message, counterexample and score; not
    durations, where the submission was, nor the notebook's own record of its cells."""
    out = json.loads(json.dumps(outcomes_only(results)).replace(f"{folder}/" if folder else "\0", ""))
    for ex in out["exercises"]:
        ex.pop("source", None)
    return out


def test_a_notebook_and_the_same_code_as_py_files_get_identical_results(tmp_path):
    mutant = REPO / "grader" / "tests" / "mutants" / "tensors" / "contiguity" / "column_major.py"
    files = {"tensors/one_hot": reference("tensors/one_hot"),
             "tensors/contiguity": mutant.read_text()}  # a wrong answer: failed properties
    folder = tmp_path / "py"
    for drill, code in files.items():
        (folder / drill).parent.mkdir(parents=True, exist_ok=True)
        (folder / f"{drill}.py").write_text(code)
    notebook = tmp_path / "hw.ipynb"
    notebook.write_bytes(nb(("markdown", "# homework"), "!pip install torchdrill", *files.values(),
                            "one_hot(torch.tensor([1, 2]))"))
    from_py = _grade(folder, tmp_path / "out-py")
    from_nb = _grade(notebook, tmp_path / "out-nb")
    assert _comparable(from_nb) == _comparable(from_py, folder)
    statuses = {e["id"]: e["status"] for e in from_nb["exercises"]}
    assert statuses == {"tensors/one_hot": "passed", "tensors/contiguity": statuses["tensors/contiguity"],
                        "tensors/padding": "not_attempted"}
    assert statuses["tensors/contiguity"] in ("partial", "failed")
    assert from_nb["submission"] == str(notebook)
    by_id = {e["id"]: e for e in from_nb["exercises"]}
    assert by_id["tensors/one_hot"]["source"]["functions"] == [{"name": "one_hot", "cell": 3, "line": 6}]
    assert "padding" not in json.dumps([e.get("source") for e in from_nb["exercises"]])
    page = (tmp_path / "out-nb" / "index.html").read_text()
    assert "from your notebook <code>hw.ipynb</code>" in page and "cell 3, line 6" in page
