"""What ``torchdrill grade`` grades: a folder laid out like ``exercises/``, or a notebook.

A ``.ipynb`` file (or a folder whose only submission is one notebook: no exercise
file, exactly one ``.ipynb`` at its top or under ``exercises/``) is read on the
trusted side with nbformat and ``ast`` only (``grader.core.notebooks``: its cells
never run here), written as exercise files to a temporary folder, and that folder
is graded like any other, in the sandbox. ``finish`` then records in the results
which cell each function came from, and names the notebook as the submission.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.core import notebooks
from grader.core import results as results_module
from grader.core.course import exercise_tests, resolve_submission
from grader.core.errors import UsageError
from grader.core.results import Results


@dataclass
class Prepared:
    """The folder to grade; for a notebook, where it came from and what was read."""

    folder: Path
    notebook: Path | None = None
    info: dict[str, Any] | None = None  # ``Extraction.as_json()``


def find_notebook(course: Path, given: str) -> Path | None:
    """The notebook ``given`` names: a ``.ipynb`` file, or a folder with no exercise
    file and exactly one notebook (at its top or under ``exercises/``). None otherwise."""
    for candidate in (Path(given), course / given):
        if candidate.is_file() and notebooks.is_notebook_name(candidate.name):
            return candidate
        if candidate.is_dir():
            return _only_notebook(course, candidate)
    return None


def _only_notebook(course: Path, folder: Path) -> Path | None:
    ids = exercise_tests(course)
    for root in (folder, folder / "exercises"):
        if any((root / f"{drill}.py").is_file() for drill in ids):
            return None
    found = sorted(p for root in (folder, folder / "exercises") if root.is_dir()
                   for p in root.glob("*.ipynb") if p.is_file() and not p.name.startswith("."))
    return found[0] if len(found) == 1 else None


@contextmanager
def prepared(course: Path, given: str) -> Iterator[Prepared]:
    """The submission ``given`` as a folder to grade (a notebook's, removed after)."""
    notebook = find_notebook(course, given)
    if notebook is None:
        yield Prepared(resolve_submission(course, given))
        return
    try:
        data = notebooks.read_bytes(notebook)
        extraction = notebooks.extract(notebook.name, data,
                                       notebooks.drill_functions(course, list(exercise_tests(course))))
    except notebooks.NotebookProblem as exc:
        raise UsageError(str(exc)) from None
    if not extraction.files:
        raise UsageError(f"{notebook}: no cell defines a drill's function (e.g. "
                         f"{_example(course)}): nothing to grade")
    folder = Path(tempfile.mkdtemp(prefix="torchdrill-notebook-"))
    try:
        write_files(folder / "submission", extraction.files)
        yield Prepared(folder / "submission", notebook.resolve(), extraction.as_json())
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _example(course: Path) -> str:
    stubs = notebooks.drill_functions(course, list(exercise_tests(course))[:1])
    names = [f"{n}()" for stub in stubs.values() for n in stub.functions]
    return names[0] if names else "a drill function"


def write_files(folder: Path, files: dict[str, bytes]) -> None:
    for rel, data in sorted(files.items()):
        target = folder.joinpath(*rel.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def finish(results: Results, prepared: Prepared, results_path: Path) -> Results:
    """For a notebook: the cells each function came from, the notebook as the
    submission, written back to ``results_path``. Other submissions: unchanged."""
    if prepared.info is None:
        return results
    notebooks.annotate(results, prepared.info)
    folder = str(prepared.folder)
    for ex in results["exercises"]:  # paths in messages: the notebook's, not a temporary folder's
        for t in ex["tests"]:
            t["message"] = t["message"].replace(folder + "/", "")
    results["submission"] = str(prepared.notebook)
    results_module.write(results, results_path)
    return results
