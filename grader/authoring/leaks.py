"""Checking a handout before it is handed out: nothing in it may give a solution away.

A handout leaks when it holds ``reference/``, a function whose body is one of the
reference's (compared as syntax trees, docstrings left out, so a copy reformatted
or renamed is still found), the name of an instructor-only test, or a file that
cannot be read as text (compiled Python may hold anything). ``find_leaks`` lists
every one; ``torchdrill release`` writes nothing while the list is not empty.
"""

from __future__ import annotations

import ast
import gettext
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from grader.authoring.public_tests import SKIPPED_PARTS

# ------------------------------------------------------------------ the course's secrets

def _reference_files(root: Path) -> Iterator[Path]:
    folder = root / "reference"
    return (p for p in sorted(folder.rglob("*.py")) if not SKIPPED_PARTS & set(p.parts)) \
        if folder.is_dir() else iter(())


def _body_key(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The body of a function as an AST dump (docstring left out); None for a stub-like
    body (``pass``, ``...``, ``raise NotImplementedError``) that carries no solution."""
    body = fn.body[1:] if ast.get_docstring(fn) is not None else fn.body
    if all(_trivial(s) for s in body):
        return None
    return ast.dump(ast.Module(body=body, type_ignores=[]))


def _trivial(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return True
    return isinstance(stmt, ast.Raise) and "NotImplementedError" in ast.unparse(stmt)


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    return (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))


def reference_bodies(root: Path) -> dict[str, str]:
    """Body dump -> ``reference/<file>:<function>``, for every function of the reference."""
    found: dict[str, str] = {}
    for path in _reference_files(root):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in _functions(tree):
            key = _body_key(fn)
            if key is not None:
                found.setdefault(key, f"{path.relative_to(root).as_posix()}:{fn.name}")
    return found


# ------------------------------------------------------------------ checking a handout

def release_files(out: Path) -> Iterator[Path]:
    return (p for p in sorted(out.rglob("*")) if p.is_file())


def catalog_text(path: Path) -> str:
    """A compiled message catalog's every message and translation, as text to check
    (the catalogs are binary; what they say is checked like any file)."""
    with open(path, "rb") as fp:
        try:
            catalog = gettext.GNUTranslations(fp)._catalog  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: BLE001 - any unreadable catalog is refused
            raise OSError(str(exc)) from None
    return "\n".join(str(part) for pair in catalog.items() for part in pair)


def find_leaks(out: Path, root: Path, hidden: Iterable[str]) -> list[str]:
    """Everything in the folder ``out`` that a handout must not hold, one line each."""
    leaks: list[str] = []
    if (out / "reference").exists():
        leaks.append(f"{out / 'reference'}: the reference solutions")
    bodies = reference_bodies(root)
    pattern = _names_pattern(hidden)
    for path in release_files(out):
        rel = path.relative_to(out).as_posix()
        if path.suffix in (".pyc", ".pyo"):
            leaks.append(f"{rel}: compiled Python (it may hold anything)")
            continue
        try:
            text = catalog_text(path) if path.suffix == ".mo" else path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            leaks.append(f"{rel}: not a text file (cannot be checked)")
            continue
        if path.suffix == ".py":
            leaks += _body_leaks(rel, text, bodies)
        if pattern is not None:
            leaks += [f"{rel}: names the instructor-only test {m.group(0)}"
                      for m in _unique_matches(pattern, text)]
    return leaks


def _body_leaks(rel: str, text: str, bodies: dict[str, str]) -> list[str]:
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        return [f"{rel}: does not parse ({exc.msg}, line {exc.lineno}), so it cannot be checked"]
    return [f"{rel}: {fn.name}() has the body of {bodies[key]}"
            for fn in _functions(tree) if (key := _body_key(fn)) in bodies]


def _names_pattern(names: Iterable[str]) -> re.Pattern[str] | None:
    names = sorted(set(names), key=len, reverse=True)
    if not names:
        return None
    return re.compile(r"\b(" + "|".join(re.escape(n) for n in names) + r")\b")


def _unique_matches(pattern: re.Pattern[str], text: str) -> list[re.Match[str]]:
    seen: dict[str, re.Match[str]] = {}
    for m in pattern.finditer(text):
        seen.setdefault(m.group(0), m)
    return list(seen.values())
