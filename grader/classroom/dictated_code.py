"""What a drill's docstring dictates, for the similarity evidence to discount.

Honest students write what the spec spells out (``masked_fill(mask == 0, -1e9)``,
``scatter_(-1, labels.unsqueeze(-1), 1)``, its ValueError checks), so matching on
that is no evidence of copying. ``dictated_by`` reads a stub's docstrings: the code
they show (````spans```` and doctest lines, filtered as copydetect filters code;
``...`` stands for anything), the names that code calls, and the exceptions they
tell the student to raise. ``dictated_mask`` marks the characters of a student's
filtered file that do what the spec says in its own words, which
``grader.classroom.similarity`` then weighs ``DICTATED_WEIGHT``.
"""

from __future__ import annotations

import itertools
import keyword
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

MIN_SNIPPET = 5  # filtered characters, at least, of a docstring's code to be discounted


def filtered(code: str) -> tuple[str, Any]:
    """copydetect's tokenizing filter for Python: (filtered code, offsets)."""
    from copydetect.utils import filter_code

    return filter_code(code, "submission.py", "python")


@dataclass(frozen=True)
class Dictated:
    """What a drill's stub dictates beyond its own code: the code its docstrings show
    (````spans```` and doctest lines, filtered; ``...`` stands for anything) and the
    exceptions they tell the student to raise."""

    snippets: tuple[str, ...]
    exceptions: frozenset[str]
    names: frozenset[str] = frozenset()


_SPAN = re.compile(r"``(.+?)``", re.S)
_DOCTEST = re.compile(r"^\s*(?:>>>|\.\.\.) ?(.*)$", re.M)
_BUILTINS = frozenset({"int", "float", "bool", "len", "tuple", "list", "range", "min", "max", "abs", "sum"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_EXCEPTION = re.compile(r"\b([A-Z][A-Za-z]*(?:Error|Exception))\b")


def dictated_by(stub: str | None) -> Dictated | None:
    """What ``stub``'s docstrings dictate (None for no stub, or one that does not parse)."""
    import ast

    if not stub:
        return None
    try:
        tree = ast.parse(stub)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    docs = [ast.get_docstring(node, clean=False) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    snippets: set[str] = set()
    exceptions: set[str] = set()
    names: set[str] = set()
    for doc in filter(None, docs):
        exceptions.update(_EXCEPTION.findall(doc))
        for code in [m.group(1) for m in _SPAN.finditer(doc)] + [m.group(1) for m in _DOCTEST.finditer(doc)]:
            names.update(n for n in _NAME.findall(code) if not keyword.iskeyword(n))
            for piece in filtered(" ".join(code.split()))[0].split("..."):
                if len(piece) >= MIN_SNIPPET:
                    snippets.add(piece)
    return Dictated(tuple(sorted(snippets, key=lambda p: (-len(p), p))), frozenset(exceptions),
                    frozenset(names))


def _raises_named(node: Any, exceptions: frozenset[str]) -> bool:
    """A ``raise`` of an exception the spec names (``raise ValueError(...)``)."""
    import ast

    if not isinstance(node, ast.Raise) or node.exc is None:
        return False
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    return isinstance(exc, ast.Name) and exc.id in exceptions


def _called(node: Any) -> str | None:
    """The name a call calls: ``f`` of ``f(...)`` and of ``x.f(...)``."""
    import ast

    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _dictated_ranges(code: str, spec: Dictated) -> list[tuple[int, int]]:
    """[start, end) character ranges of ``code`` that do what the spec says in its own
    words: guards that only raise an exception it names (``if <condition>: raise
    ValueError(...)``, no ``else``) and such ``raise`` statements anywhere, and calls of
    the functions and methods its code names (``x.scatter_(...)``, ``torch.tril(...)``),
    and whole simple statements whose every call is one of those (or a builtin)."""
    import ast

    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    lines = code.splitlines(keepends=True)
    starts = list(itertools.accumulate((len(line) for line in lines), initial=0))

    def at(line: int, col: int) -> int:  # ast columns count UTF-8 bytes
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        return starts[line - 1] + len(text.encode("utf-8")[:col].decode("utf-8", errors="ignore"))

    def spelled_out(node: Any) -> bool:  # a statement whose every call the spec names (or a builtin)
        if not isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Expr)):
            return False
        calls = [_called(n) for n in ast.walk(node) if isinstance(n, ast.Call)]
        return any(c in spec.names for c in calls) and all(c in spec.names or c in _BUILTINS for c in calls)

    ranges = []
    for node in ast.walk(tree):
        guard = isinstance(node, ast.If) and not node.orelse and len(node.body) == 1 \
            and _raises_named(node.body[0], spec.exceptions)
        named = (isinstance(node, ast.Call) and _called(node) in spec.names) or spelled_out(node)
        if not (guard or named or _raises_named(node, spec.exceptions)):
            continue
        assert isinstance(node, (ast.stmt, ast.expr))
        if node.end_lineno is not None and node.end_col_offset is not None:
            ranges.append((at(node.lineno, node.col_offset), at(node.end_lineno, node.end_col_offset)))
    return ranges


def dictated_mask(code: str, text: str, offsets: Any, spec: Dictated | None) -> np.ndarray:
    """Which characters of ``text`` (``code`` filtered, with copydetect's ``offsets``) the
    spec dictates: occurrences of its snippets, and ``code``'s guards that raise the
    exceptions it names."""
    mask = np.zeros(len(text), dtype=bool)
    if spec is None or not len(text):
        return mask
    for piece in spec.snippets:
        at = text.find(piece)
        while at >= 0:
            mask[at:at + len(piece)] = True
            at = text.find(piece, at + 1)
    ranges = _dictated_ranges(code, spec)
    if ranges:
        where = np.arange(len(text))
        table = np.asarray(offsets)
        raw = where + table[:, 1][np.clip(np.searchsorted(table[:, 0], where), 0, len(table) - 1)] \
            if len(table) else where
        for start, end in ranges:
            mask |= (raw >= start) & (raw < end)
    return mask
