"""Every module path and dotted name the docs, docstrings and templates quote exists.

Modules move; the sentences that point at them stay behind (``grader.run_grading``,
``grader/report.py`` outlived the flat layout by many stops). This reads the README,
``docs/``, the course's guide, the engine's and the course's Python files, the
report templates and ``pyproject.toml``, and resolves every ```grader.x.y``` quoted
in backticks (importing the module, then its attributes) and every repository path
(``grader/...py``, ``tests/...``, ``docs/...``).
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

from grader.tests.grading import REPO

# Hostile or synthetic submissions, and files the tests make at run time, are not prose.
CORPORA_PARTS = frozenset(("adversarial", "mutants", "lazy", "same_verdict", "fair", "data"))
MADE_AT_TEST_TIME = ("tests/demo/",)
DOTTED = re.compile(r"`+(grader(?:\.[A-Za-z_]\w*)+)")
PATH = re.compile(r"(?<![\w/.-])((?:grader|tests|bench|docs|report_templates)/[\w/.-]*\w\.(?:py|md|j2|json|toml))")


def _sources() -> list[Path]:
    pages = [p for p in REPO.glob("docs/**/*.md") if "_build" not in p.relative_to(REPO).parts]  # not the built site
    found = [REPO / "README.md", REPO / "pyproject.toml", *pages, REPO / "tests" / "README.md"]
    found += [p for p in (*REPO.glob("grader/**/*.py"), *REPO.glob("tests/**/*.py"), *REPO.glob("bench/*.py"))
              if not CORPORA_PARTS.intersection(p.relative_to(REPO).parts)]
    found += [*REPO.glob("report_templates/*.j2"), *REPO.glob("grader/authoring/templates/*")]
    return [p for p in found if p.is_file() and p != Path(__file__)]  # this file quotes stale ones


def _resolves(name: str) -> bool:
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_every_quoted_module_and_path_exists():
    stale: dict[str, set[str]] = {}
    for source in _sources():
        text = source.read_text(encoding="utf-8", errors="replace")
        where = source.relative_to(REPO).as_posix()
        for match in DOTTED.finditer(text):
            if not _resolves(match.group(1)):
                stale.setdefault(match.group(1), set()).add(where)
        for match in PATH.finditer(text):
            path = match.group(1)
            if not path.startswith(MADE_AT_TEST_TIME) and not (REPO / path).exists():
                stale.setdefault(path, set()).add(where)
    assert not stale, "stale pointers (name: where): " + "; ".join(
        f"{name}: {', '.join(sorted(places))}" for name, places in sorted(stale.items()))


# Rooms whose modules the lead's refactor of issue 39 is moving: their docstrings are
# brought up to date with it (drop a room from here once its docstring names them all).
ROOMS_BEING_REBUILT: frozenset[str] = frozenset()


def test_every_rooms_docstring_names_each_of_its_modules():
    """Each subpackage's ``__init__`` says what it owns (docs/contributing.md): every module
    of the room is named there in double backticks, so a module added or renamed without
    its room's docstring (``reports``' ``report`` for ``student_report``) fails here."""
    import ast

    unnamed: dict[str, list[str]] = {}
    for init in sorted((REPO / "grader").glob("*/__init__.py")):
        room = init.parent
        if room.name in ("tests", *ROOMS_BEING_REBUILT):
            continue
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        modules = sorted({p.stem for p in room.glob("*.py") if p.name != "__init__.py"}
                         | {p.parent.name for p in room.glob("*/__init__.py")})
        missing = [m for m in modules if f"``{m}``" not in doc]
        if missing:
            unnamed[room.name] = missing
    assert not unnamed, f"modules their room's docstring does not name: {unnamed}"
