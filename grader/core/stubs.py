"""The course's stubs, pristine, even in a learner's working copy.

``exercises/`` is where a learner works: once they have done two drills it no
longer holds the stubs. Whatever needs the stubs as the course hands them out
(the handout ``torchdrill release`` writes, the self-check that the stubs score 0,
synthetic classes) takes them from ``stub_source``: the exercise file with the
body of every function, at any depth, reset to its docstring and
``raise NotImplementedError``. Everything else in the file (module docstring,
imports, constants, signatures, docstrings) stays as written, byte for byte, so
a pristine stub comes back unchanged.
"""

from __future__ import annotations

import ast
from pathlib import Path

from grader.core import drill_texts

STUB_BODY = "raise NotImplementedError"


def is_stub_body(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A body that is (a docstring and) ``raise NotImplementedError`` only."""
    body = fn.body[1:] if ast.get_docstring(fn, clean=False) is not None else fn.body
    return (len(body) == 1 and isinstance(body[0], ast.Raise) and body[0].exc is not None
            and ast.unparse(body[0].exc) in ("NotImplementedError", "NotImplementedError()"))


def stub_source(source: str) -> str:
    """``source`` with every function that is not a stub emptied to one (see the module
    docstring). Raises ``SyntaxError`` for a file that does not parse."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    edits = []  # (first line, last line, replacement), 1-based inclusive, outermost functions
    for fn in _outermost_functions(tree):
        if is_stub_body(fn):
            continue
        first_stmt = fn.body[0]
        indent = " " * first_stmt.col_offset
        keep_doc = ast.get_docstring(fn, clean=False) is not None
        start = (fn.body[1] if keep_doc and len(fn.body) > 1 else first_stmt).lineno
        if keep_doc and len(fn.body) == 1:  # a docstring alone: the raise goes after it
            start = (first_stmt.end_lineno or first_stmt.lineno) + 1
            edits.append((start, start - 1, f"{indent}{STUB_BODY}\n"))
            continue
        end = fn.end_lineno or fn.lineno
        if not keep_doc and first_stmt.lineno == fn.lineno:  # def f(): return 1 (one line)
            return _rebuilt(tree)
        edits.append((start, end, f"{indent}{STUB_BODY}\n"))
    for first, last, text in sorted(edits, reverse=True):
        lines[first - 1:last] = [text]
    return "".join(lines)


def _outermost_functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Functions not nested in another function (methods of classes included)."""
    found: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append(node)
        elif isinstance(node, ast.ClassDef):
            found += _outermost_functions(node)
    return found


def _rebuilt(tree: ast.Module) -> str:
    """The whole module unparsed with stub bodies (when a body shares its ``def`` line,
    there is no text to keep around it)."""
    for fn in _outermost_functions(tree):
        doc = fn.body[:1] if ast.get_docstring(fn, clean=False) is not None else []
        fn.body = [*doc, ast.parse(STUB_BODY).body[0]]
    return ast.unparse(tree) + "\n"


def handout_source(course: Path, drill_id: str, lang: str = "en") -> str:
    """The stub of ``drill_id`` as the course hands it out in ``lang``: pristine
    (``stub_source``), with the docstrings the course has in that language
    (``grader.core.drill_texts``); English where it has none."""
    stub = stub_source((course / "exercises" / f"{drill_id}.py").read_text(encoding="utf-8"))
    texts = drill_texts.load(course, lang, drill_id) if lang != "en" else None
    return drill_texts.translated_source(stub, texts) if texts is not None else stub


def write_stubs(course: Path, dest: Path, lang: str = "en") -> list[Path]:
    """The course's pristine stubs (``handout_source`` of every ``exercises/**/*.py``, in
    ``lang``) under ``dest``, laid out like ``exercises/``; returns the files written."""
    written = []
    source_root = course / "exercises"
    for path in sorted(source_root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        rel = path.relative_to(source_root)
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(handout_source(course, rel.with_suffix("").as_posix(), lang), encoding="utf-8")
        written.append(target)
    return written
