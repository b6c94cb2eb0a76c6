"""A synthetic class for grade-all's tests and benchmark: submissions made from the
course's own files, so every expected score is known.

Kinds, in turn: ``reference`` (a copy of reference/: full marks), ``stubs`` (the
course's pristine stubs, ``grader.core.stubs``: nothing attempted), ``half`` (the
reference for every other drill, stubs for the rest), ``mutant`` (the reference with one drill replaced by a
known-wrong implementation from ``grader/tests/mutants``). Every fifth submission
is handed in as a ``.zip`` (every tenth as a zip of a handout folder,
``exercises/...`` inside), the way students upload them.
"""

from __future__ import annotations

import ast
import os
import shutil
import zipfile
from pathlib import Path

from grader.core.stubs import write_stubs
from grader.tests.grading import REPO

KINDS = ("reference", "stubs", "half", "mutant")
# A class is graded officially: examples drawn from a course secret (``grader.core.course_secret``).
CLASS_SECRET = "torchdrill-tests-class-secret-0001"


def with_secret(env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's) with the class's course secret in it."""
    return {**(os.environ if env is None else env), "TORCHDRILL_SECRET": CLASS_SECRET}

MUTANTS = REPO / "grader" / "tests" / "mutants"
# Mutants a quick grading (at most 25 examples per property) always catches: class tests grade
# with the quick profile and expect every mutant student to lose points. (Some of the corpus
# needs a particular memory layout or dtype, which 25 examples may not draw.) And cheaply:
# every failure is shrunk, so one that loses many properties in slow ways costs a class
# seconds (one_hot's float_dtype grades several times as long as flat_only).
QUICK_MUTANTS = ("tensors/one_hot/classes_is_max.py", "tensors/one_hot/flat_only.py",
                 "tensors/contiguity/column_major.py", "tensors/contiguity/no_length_check.py",
                 "tensors/padding/time_major.py", "tensors/padding/zeros_ignore_padding_value.py")


def drills() -> list[str]:
    """Every drill id, ``tensors/one_hot`` style, in a fixed order."""
    return sorted(p.relative_to(REPO / "reference").with_suffix("").as_posix()
                  for p in (REPO / "reference").rglob("*.py") if "__pycache__" not in p.parts)


def _mutants() -> list[tuple[str, Path]]:
    found = []
    for name in QUICK_MUTANTS:
        path = MUTANTS / name
        found.append((path.parent.relative_to(MUTANTS).as_posix(), path))
    return found


def make_submission(dest: Path, kind: str, index: int, only: list[str] | None = None) -> None:
    """One submission of ``kind`` laid out like exercises/ at ``dest``
    (``only``: the drills that matter, the ones a mutant may replace)."""
    if kind == "stubs":
        write_stubs(REPO, dest)
        return
    shutil.copytree(REPO / "reference", dest, ignore=shutil.ignore_patterns("__pycache__"))
    ids = drills()
    if kind == "half":
        stubs = dest.parent / f".stubs-{dest.name}"
        write_stubs(REPO, stubs)
        for n, drill in enumerate(ids):
            if n % 2 == index % 2:
                shutil.copyfile(stubs / f"{drill}.py", dest / f"{drill}.py")
        shutil.rmtree(stubs)
    elif kind == "mutant":
        mutants = [(d, p) for d, p in _mutants() if not only or d in only]
        drill, path = mutants[index % len(mutants)]
        shutil.copyfile(path, dest / f"{drill}.py")


def make_class(folder: Path, n: int, only: list[str] | None = None) -> dict[str, str]:
    """``n`` submissions in ``folder``; returns student id -> kind."""
    folder.mkdir(parents=True, exist_ok=True)
    kinds = {}
    for i in range(n):
        kind = KINDS[i % len(KINDS)]
        student = f"张三-{kind}" if i == 4 else f"s{i:03d}-{kind}"  # a zip named in Chinese
        kinds[student] = kind
        if i % 5 == 4:
            staging = folder / f".staging-{student}"
            inner = staging / "exercises" if i % 10 == 9 else staging
            make_submission(inner, kind, i, only)
            _zip(staging, folder / f"{student}.zip")
            shutil.rmtree(staging)
        else:
            make_submission(folder / student, kind, i, only)
    return kinds


def _zip(folder: Path, target: Path) -> None:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())


# ------------------------------------------------------------------ disguised copies

class _Renamer(ast.NodeTransformer):
    """Renames every local variable of every function (never a parameter: tests may pass
    arguments by keyword), as a student disguising a copy would."""

    def __init__(self, seed: int):
        self.seed = seed

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        params = {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
        stored = sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name)
                         and isinstance(n.ctx, ast.Store)} - params)
        mapping = {name: f"{name[:1]}_{self.seed}_{i}" for i, name in enumerate(stored)}
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id in mapping:
                n.id = mapping[n.id]
        return node


def _independent(a: ast.stmt, b: ast.stmt) -> bool:
    """Two assignments neither of which reads or writes what the other writes."""
    if not (isinstance(a, ast.Assign) and isinstance(b, ast.Assign)):
        return False
    def names(node: ast.AST, ctx: type) -> set[str]:
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)}
    wa, wb = names(a, ast.Store), names(b, ast.Store)
    return not (wa & (names(b, ast.Load) | wb) or wb & names(a, ast.Load))


def disguise(source: str, seed: int) -> str:
    """``source`` with its local variables renamed, independent neighbouring assignments
    swapped, its top-level functions in reverse order, comments and docstrings gone
    and the layout ``ast.unparse`` gives: a copy that no longer looks like one."""
    tree = _Renamer(seed).visit(ast.parse(source))
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = fn.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:] or [ast.Pass()]
            for i in range(len(body) - 1):
                if _independent(body[i], body[i + 1]):
                    body[i], body[i + 1] = body[i + 1], body[i]
            fn.body = body
    heads = [n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    functions = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    tree.body = [n for n in heads if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))] \
        + functions[::-1]
    return ast.unparse(tree) + "\n"


def padded(code: str, size: int) -> str:
    """``code`` followed by functions nobody calls, and a comment, to exactly ``size``
    bytes (UTF-8): it still scores what ``code`` scores."""
    out, i = [code.rstrip("\n") + "\n"], 0
    used = len(out[0].encode())
    while True:
        piece = f"\n\ndef _unused_{i}(x, y):\n    z = x * {i} + y\n    return z - {i}\n"
        if used + len(piece) + 3 > size:
            break
        out.append(piece)
        used += len(piece)
        i += 1
    out.append("#" + "x" * (size - used - 2) + "\n")
    return "".join(out)
