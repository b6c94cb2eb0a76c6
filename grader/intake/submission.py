"""The one intake: whatever is handed in, opened into a ``Submission``.

``open_submission`` takes what a user names (``torchdrill grade``, ``check``, the
Gradescope run) and ``from_entry`` what ``grade-all`` found in a class folder; both
read it by the same rules (``grader.intake.reader``): a folder laid out like
``exercises/`` (or a handout folder, or one top folder around it), a ``.zip`` of
one, a notebook, loose drill files (``one_hot.py``), or a folder holding exactly
one ``.zip``. A notebook is read on the trusted side with nbformat and ``ast``
only (``grader.intake.notebooks``: its cells never run here).

A ``Submission`` knows its files; grading needs them as a folder. ``materialized``
gives that folder: a folder on disk is graded where it is (a learner's
``breakpoint()`` and tracebacks show their own files), anything else is written to
a temporary folder first. ``finish`` then makes the results name the submission
as handed in: which notebook cell each function came from, and no temporary path.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Any

from grader.core.errors import NotGradable, UsageError
from grader.core.files import remove_tree
from grader.core.i18n import N_, _
from grader.core.results_json import Results
from grader.core.sources import MAX_SOURCE_BYTES
from grader.core.sources import read as read_source
from grader.core.syllabus import exercise_tests
from grader.intake import archives, cell_lines, notebooks, reader


class Kind(StrEnum):
    """What was handed in."""

    FOLDER = "folder"
    ZIP = "zip"
    NOTEBOOK = "notebook"
    LOOSE = "loose files"


# What each kind is called in a sentence ("{given} is a {kind}, not a folder").
KIND_WORDS = {Kind.FOLDER: N_("folder"), Kind.ZIP: N_("zip"), Kind.NOTEBOOK: N_("notebook"),
              Kind.LOOSE: N_("loose files")}


@dataclass(frozen=True)
class Submission:
    """One submission, read: its files and where they came from."""

    name: str  # how results name it: the student id, or the path given
    source: Path  # what was handed in
    kind: Kind
    files: Mapping[str, bytes]  # the .py files graded, by their path under exercises/
    notebook: dict[str, Any] | None = None  # a notebook's cell of each function (``Extraction.as_json``)
    folder: Path | None = None  # a folder on disk, graded where it is

    @property
    def content_hash(self) -> str:
        """The files' digest: the same content hashes the same however it came."""
        return archives.content_hash(dict(self.files))


def open_submission(given: str | Path, course: Path, student: str | None = None) -> Submission:
    """The submission ``given`` names (a path, else one under the course), read.

    Raises ``NotGradable`` with a sentence naming what was found where, or
    ``UsageError`` when there is nothing at that path."""
    path = _find(Path(given), course)
    if path.suffix == ".py" and path.is_file() and not path.is_symlink():
        return _drill_file(path, course, student)
    entry = reader.entry_of(path, exercise_tests(course), student or path.name)
    if student is None:
        shown = entry.source / entry.notebook if entry.kind == "folder" and entry.notebook else entry.source
        student = str(shown.absolute())
    return from_entry(entry, course, name=student)


def from_entry(entry: reader.Entry, course: Path, name: str | None = None,
               stubs: Mapping[str, notebooks.Stub] | None = None) -> Submission:
    """An entry ``grade-all`` discovered (or ``open_submission`` classified), read;
    ``name``: how the results name it (default: the student id); ``stubs``: the course's
    ``notebooks.drill_functions``, for a caller reading many entries (read here when
    not given). Raises ``NotGradable``."""
    if entry.problem is not None:
        raise NotGradable(entry.problem)
    name = name or entry.student
    if entry.notebook is not None:
        if stubs is None:
            stubs = notebooks.drill_functions(course, sorted(exercise_tests(course)))
        extraction = reader.notebook(entry, dict(stubs))
        return Submission(name, entry.source, Kind.NOTEBOOK, extraction.files, extraction.as_json())
    files = reader.files(entry)
    if entry.loose is not None:
        return Submission(name, entry.source, Kind.LOOSE, files)
    if entry.kind == "zip":
        return Submission(name, entry.source, Kind.ZIP, files)
    root = entry.source.joinpath(*entry.root.split("/")) if entry.root else entry.source
    return Submission(name, entry.source, Kind.FOLDER, files, folder=root.resolve())


def learner_folder(given: str | Path, course: Path) -> Path:
    """The folder a learner's loop (``check``, ``watch``, ``hint``, ``list``) works in:
    ``given`` opened by the same rules as any submission, which must be a folder on
    disk (a handout folder's ``exercises/``, say)."""
    try:
        submission = open_submission(given, course)
    except NotGradable:
        path = _find(Path(given), course)
        if path.is_dir() and not path.is_symlink():  # nothing to grade yet, but the learner's folder
            return path.resolve()
        raise
    if submission.folder is None:
        raise UsageError(_("{given} is a {kind}, not a folder: check, watch and hint work in your "
                           "exercises folder; `torchdrill grade` grades a zip or a notebook",
                           given=given, kind=_(KIND_WORDS[submission.kind])))
    return submission.folder


def from_files(name: str, files: Mapping[str, bytes], kind: Kind = Kind.FOLDER,
               notebook: dict[str, Any] | None = None) -> Submission:
    """A submission read elsewhere (a grading process's job): graded from its files."""
    return Submission(name, Path(name), kind, files, notebook)


def _find(given: Path, course: Path) -> Path:
    for candidate in (given, course / given):
        if candidate.exists() or candidate.is_symlink():
            return candidate
    looked = list(dict.fromkeys(str(p) for p in (given.absolute(), (course / given).absolute())))
    if len(looked) > 1:
        raise UsageError(_("submission {given} does not exist (looked for {first} and {second})",
                           given=given, first=looked[0], second=looked[1]))
    raise UsageError(_("submission {given} does not exist", given=given))


def _drill_file(path: Path, course: Path, student: str | None) -> Submission:
    """One drill's file handed in alone (``one_hot.py``): graded as that drill."""
    drills = reader.drills_named(exercise_tests(course)).get(path.name, [])
    if len(drills) != 1:
        example = next(iter(exercise_tests(course)), "topic/drill")
        params = {"file": path.name, "name": PurePosixPath(example).name, "example": example,
                  "count": len(drills)}
        raise NotGradable(
            _("{file} is not named after a drill (e.g. {name}.py for {example}), or names {count} of them: "
              "give your exercises folder, a .zip of it, a notebook, or a drill's own file", **params)
            if drills else
            _("{file} is not named after a drill (e.g. {name}.py for {example}): give your exercises "
              "folder, a .zip of it, a notebook, or a drill's own file", **params))
    data = read_source(path)
    if data is None:
        raise NotGradable(_("{file} cannot be read as a source file (at most {limit} bytes, a regular file)",
                            file=path.name, limit=f"{MAX_SOURCE_BYTES:,}"))
    return Submission(student or str(path.absolute()), path, Kind.LOOSE, {f"{drills[0]}.py": data})


# ------------------------------------------------------------------ grading it

@contextmanager
def materialized(submission: Submission, work: Path | None = None) -> Iterator[Path]:
    """The folder to grade: the submission's own folder, or its files written under
    ``work`` (a temporary folder by default), removed after."""
    if submission.folder is not None:
        yield submission.folder
        return
    parent = Path(tempfile.mkdtemp(prefix="torchdrill-submission-", dir=work))
    os.chmod(parent, 0o755)  # the sandbox's copy of it must stay reachable
    folder = parent / "submission"
    try:
        archives.unpack(archives.pack(dict(submission.files)), folder)
        yield folder
    finally:
        remove_tree(parent)


def finish(results: Results, submission: Submission, folder: Path) -> Results:
    """The results as of the submission handed in: a temporary folder's paths shown
    as the submission's name, a notebook's cell for each function."""
    if submission.folder is None:  # messages, tracebacks, output: paths as under exercises/, no temporary folder
        text = json.dumps(results).replace(json.dumps(f"{folder}/")[1:-1], "")
        results = json.loads(text.replace(json.dumps(str(folder))[1:-1], json.dumps(submission.name)[1:-1]))
    if submission.notebook is not None:
        results = cell_lines.annotate(results, submission.notebook)
    results["submission"] = submission.name
    return results
