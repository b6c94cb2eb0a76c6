"""``torchdrill release OUT``: the student handout, with nothing secret in it.

What goes in: the ``exercises/`` stubs (pristine: ``grader.core.stubs``, so a
course author's own solutions in ``exercises/`` never ship) with the course's English
docstrings beside them (``grader.core.docstring_record``), the grader package (without its own
tests: their mutants and self-checks name hidden tests and need the reference),
the public tests (cut by ``grader.authoring.public_tests``), ``report_templates/``,
``course.toml``, ``pyproject.toml``, ``constraints*.txt``, ``.gitignore``, and the
files written for the student (``grader.authoring.student_files``: a ``tox.ini`` with
the environments a handout can run, a ``README.md``). Every drill must keep at least
one public property, whose oracle is PyTorch itself or an invariant. The official
grade, on the instructor's side, runs all of them.

The handout is written to a temporary folder beside ``OUT``, checked
(``grader.authoring.leaks``: no function body of ``reference/``, no instructor-only
test name, anywhere; every drill keeps a public property), and only then renamed to ``OUT``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from grader.authoring.handout_notebooks import NOTEBOOKS_DIR, write_notebooks
from grader.authoring.leaks import find_leaks, release_files
from grader.authoring.public_tests import (
    SKIPPED_PARTS,
    Filtered,
    course_test_files,
    filtered_tests,
    hidden_names,
    public_properties,
)
from grader.authoring.student_files import ReleaseError, student_pyproject, student_readme, student_tox_ini
from grader.core import docstring_record, drill_texts, i18n, syllabus
from grader.core.errors import EXIT_OK, UsageError
from grader.core.i18n import _
from grader.core.stubs import write_stubs

COPIED_FILES = ("course.toml", "pyproject.toml", ".gitignore")
COPIED_GLOBS = ("constraints*.txt",)
COPIED_DIRS = ("report_templates", "locales")  # locales: the drills' texts in other languages


@dataclass
class Release:
    """What a release wrote: the folder, each drill's public and instructor-only
    properties, and the files (for the command's summary)."""

    out: Path
    public: dict[str, list[str]]
    hidden: dict[str, list[str]]
    files: list[str]


def build(root: Path, out: Path, notebooks: bool = False, handout_url: str = "",
          lang: i18n.Lang = i18n.Lang.EN) -> Release:
    """Write the handout of the course at ``root`` to the new folder ``out`` (with
    ``notebooks``, also one notebook per topic: ``grader.authoring.handout_notebooks``),
    its stubs' docstrings in ``lang``, which becomes the handout's default language."""
    course = _checked_course(root)
    _check_english(root, course)
    filtered = filtered_tests(root)
    public = public_properties(root, filtered)
    bare = [d for d in course.ids if not public.get(d)]
    if bare:
        raise ReleaseError(f"drill {', '.join(bare)} would have no public property (every test needs "
                           "the reference or is hidden): add one whose oracle is PyTorch or an invariant")
    target = _new_folder(out)
    staging = Path(tempfile.mkdtemp(prefix=".torchdrill-release-", dir=target.parent))
    try:
        _write_handout(root, staging, course, filtered, public, notebooks, lang)
        _drop_titles(staging / drill_texts.LOCALES, hidden_names(filtered))
        if notebooks:
            write_notebooks(root, staging, course, handout_url, lang)
        leaks = find_leaks(staging, root, hidden_names(filtered))
        if leaks:
            raise ReleaseError("the handout would leak:\n  " + "\n  ".join(leaks))
        files = [p.relative_to(staging).as_posix() for p in release_files(staging)]
        if target.exists():
            target.rmdir()  # checked empty by _new_folder
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    by_path = {path.resolve(): drill for drill, path in syllabus.exercise_tests(root).items()}
    hidden = {by_path[p.resolve()]: f.removed_tests for p, f in filtered.items() if p.resolve() in by_path}
    return Release(target, public, hidden, files)


def _checked_course(root: Path) -> syllabus.Course:
    if not (root / syllabus.COURSE_FILE).is_file():
        raise ReleaseError(f"{root} has no {syllabus.COURSE_FILE}: a release needs the course "
                           "order and hints (and graders recognise a handout by it)")
    try:
        course = syllabus.load(root)
        listed = set(syllabus.listed_ids(root))
    except syllabus.CourseError as exc:
        raise ReleaseError(str(exc)) from None
    tested = set(syllabus.exercise_tests(root))
    if listed != tested:
        raise ReleaseError(f"{syllabus.COURSE_FILE} and tests/ disagree: only in "
                           f"{syllabus.COURSE_FILE}: {', '.join(sorted(listed - tested)) or 'none'}; "
                           f"only in tests/: {', '.join(sorted(tested - listed)) or 'none'}")
    return course


def _check_english(root: Path, course: syllabus.Course) -> None:
    """The course's stubs are its English: refuse ``exercises/`` whose docstrings
    ``torchdrill stubs`` switched to another language (its record of the English differs)."""
    try:
        kept = docstring_record.read(root / "exercises")
    except UsageError as exc:
        raise ReleaseError(str(exc)) from None
    for drill in course.ids:
        path = root / "exercises" / f"{drill}.py"
        if drill not in kept or not path.is_file():
            continue
        try:
            now = drill_texts.docstrings(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue  # the stub check says what is wrong with it
        if any(name in now and now[name] != text for name, text in kept[drill].items()):
            raise ReleaseError(f"exercises/{drill}.py: its docstrings are not the English kept in "
                               f"exercises/{docstring_record.ENGLISH_FILE} (switched by `torchdrill stubs`?): "
                               "run `torchdrill stubs --lang en` first, or delete that file if these are the "
                               "course's English")


def _new_folder(out: Path) -> Path:
    out = out.resolve()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ReleaseError(f"{out} already exists and is not an empty folder: choose a new one")
    out.parent.mkdir(parents=True, exist_ok=True)
    return out


def _write_handout(root: Path, out: Path, course: syllabus.Course,
                   filtered: dict[Path, Filtered], public: dict[str, list[str]], notebooks: bool = False,
                   lang: i18n.Lang = i18n.Lang.EN) -> None:
    write_stubs(root, out / "exercises", lang)  # the stubs as handed out, whatever exercises/ holds now
    # the course's English docstrings beside them: `torchdrill stubs` switches a handout's stubs both ways
    docstring_record.write(out / "exercises", docstring_record.of_course(root, course.ids))
    _copy_tree(root / "grader", out / "grader", lambda p: p.relative_to(root / "grader").parts[0] != "tests")
    for path in course_test_files(root):
        target = out / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(filtered[path].source if path in filtered else path.read_text(encoding="utf-8"),
                          encoding="utf-8")
    _copy_tree(root / "tests", out / "tests", lambda p: p.suffix not in (".py", ".pyc"))
    for name in COPIED_DIRS:
        _copy_tree(root / name, out / name, lambda p: True)
    for name in COPIED_FILES:
        if (root / name).is_file():
            shutil.copy2(root / name, out / name)
    for pattern in COPIED_GLOBS:
        for path in sorted(root.glob(pattern)):
            shutil.copy2(path, out / path.name)
    if lang is not i18n.Lang.EN and (out / syllabus.COURSE_FILE).is_file():
        path = out / syllabus.COURSE_FILE
        path.write_text(syllabus.with_language(path.read_text(encoding="utf-8"), lang.value), encoding="utf-8")
    student_pyproject(out / "pyproject.toml")
    (out / "tox.ini").write_text(student_tox_ini(root / "tox.ini"), encoding="utf-8")
    (out / "README.md").write_text(student_readme(root, course, public, notebooks, lang.value), encoding="utf-8")


def _drop_titles(locales: Path, hidden: set[str]) -> None:
    """The translations' property titles of instructor-only tests left out (their names
    would say what the handout holds back). A title is one ``name = "..."`` line; one
    written otherwise stays, and the leak check then refuses the release."""
    pattern = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=")
    for path in sorted(locales.rglob("*.toml")):
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        kept = [line for line in lines if not ((m := pattern.match(line)) and m.group(1) in hidden)]
        if len(kept) != len(lines):
            path.write_text("".join(kept), encoding="utf-8")


def _copy_tree(src: Path, dst: Path, keep: Callable[[Path], bool]) -> None:
    """Copy the files under ``src`` that ``keep`` accepts, never caches or dot-files."""
    if not src.is_dir():
        return
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if not path.is_file() or SKIPPED_PARTS & set(rel.parts) \
                or any(part.startswith(".") for part in rel.parts) or not keep(path):
            continue
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dst / rel)


# ------------------------------------------------------------------ the command

def cmd_release(args: argparse.Namespace) -> int:
    root = Path(args.course).resolve() if args.course else syllabus.find_course(Path.cwd())
    try:
        made = build(root, Path(args.out), notebooks=getattr(args, "notebooks", False),
                     handout_url=getattr(args, "handout_url", None) or "",
                     lang=args.lang)
    except ReleaseError as exc:
        raise UsageError(_("no release written: {error}", error=exc)) from None
    print(_("release: {path} ({count} files)", path=made.out, count=len(made.files)))
    for drill, names in made.public.items():
        left_out = len(made.hidden.get(drill, []))
        print("  " + _("{drill}: {public} public properties, {left_out} instructor-only left out",
                       drill=drill, public=len(names), left_out=left_out))
    notebooks = [f for f in made.files if f.startswith(f"{NOTEBOOKS_DIR}/")]
    if notebooks:
        print(_("notebooks: {notebooks} (one per topic: set-up, each drill's spec, stub and check)",
                notebooks=", ".join(notebooks)))
    print(_("checked: no reference code, no instructor-only test name; grade it with "
            "`cd {path} && tox -e grade`", path=made.out))
    return EXIT_OK
