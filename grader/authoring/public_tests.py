"""Which of the course's tests a handout may hold, and the test modules cut down to them.

The rule: a property is *instructor-only* when it is marked ``pytest.mark.hidden``
(its oracle would give the solution away) or when it needs the ``ref`` fixture
(there is no reference code in a handout to run it with), directly or through a
fixture that does. Instructor-only tests are cut out of the copied test modules,
with whatever only they used (helpers, fixtures, constants, imports); the rest of
the text (comments, layout) is kept as written. ``grader.authoring.release`` writes
what is left; ``grader.authoring.leaks`` checks no hidden name survived.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeGuard

from grader.core import syllabus

REF_FIXTURE = "ref"
SKIPPED_PARTS = {"__pycache__", ".hypothesis", ".pytest_cache", ".tox"}
_HIDDEN_MARK = re.compile(r"(^|\.)mark\.hidden\b")


FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef  # a test, or a fixture
ImportStmt = ast.Import | ast.ImportFrom


# ------------------------------------------------------------------ which tests are public

def _is_hidden_mark(node: ast.AST) -> bool:
    return any(_HIDDEN_MARK.search(ast.unparse(n)) for n in ast.walk(node)
               if isinstance(n, (ast.Attribute, ast.Call)))


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    a = fn.args
    return {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}


def _is_fixture(fn: ast.AST) -> TypeGuard[FunctionNode]:
    return isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        "fixture" in ast.unparse(d) for d in fn.decorator_list)


def _is_test(node: ast.AST) -> TypeGuard[FunctionNode]:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")


def _is_test_class(node: ast.AST) -> TypeGuard[ast.ClassDef]:
    return isinstance(node, ast.ClassDef) and node.name.startswith("Test")


def _module_hidden(tree: ast.Module) -> bool:
    """``pytestmark`` carries ``pytest.mark.hidden``: every test of the module is hidden."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                for t in node.targets):
            if _is_hidden_mark(node.value):
                return True
    return False


def ref_fixtures(tree: ast.Module, known: frozenset[str] = frozenset()) -> set[str]:
    """Fixtures of ``tree`` that need ``ref``, directly or through another such fixture."""
    needing = {REF_FIXTURE, *known}
    fixtures = [n for n in tree.body if _is_fixture(n)]
    changed = True
    while changed:
        changed = False
        for fn in fixtures:
            if fn.name not in needing and _params(fn) & needing:
                needing.add(fn.name)
                changed = True
    return needing - {REF_FIXTURE}


def instructor_only(node: ast.AST, hidden_module: bool, needing_ref: set[str]) -> bool:
    """The release rule, for a test, a test class or a fixture: marked hidden, or needs
    the reference (the ``ref`` fixture, or a fixture that uses it)."""
    if not (_is_test(node) or _is_test_class(node) or _is_fixture(node)):
        return False
    if hidden_module or any(_is_hidden_mark(d) for d in node.decorator_list):
        return True
    if isinstance(node, ast.ClassDef):
        return False
    return bool(_params(node) & ({REF_FIXTURE} | needing_ref))


# ------------------------------------------------------------------ cutting a test module

@dataclass
class Filtered:
    source: str
    removed_tests: list[str] = field(default_factory=list)
    kept_tests: list[str] = field(default_factory=list)
    removed_other: list[str] = field(default_factory=list)


def _defined(node: ast.stmt) -> set[str]:
    """Names a top-level statement defines."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {_bound(a) for a in node.names}
    return set()


def _bound(alias: ast.alias) -> str:
    return alias.asname or alias.name.split(".")[0]


def _uses(node: ast.AST) -> set[str]:
    """Names a statement refers to; a function's parameters count (they request fixtures)."""
    used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    for fn in ast.walk(node):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            used |= _params(fn)
    return used


def filter_test_module(source: str, needing_ref: frozenset[str] = frozenset()) -> Filtered:
    """Cut the instructor-only tests out of a test module, and everything that only
    they used; the rest of the text (comments, layout) is kept as written."""
    tree = ast.parse(source)
    hidden_module = _module_hidden(tree)
    needing = ref_fixtures(tree, needing_ref)
    body = list(tree.body)
    removed: set[int] = set()
    for i, node in enumerate(body):
        if instructor_only(node, hidden_module, needing) or (_is_fixture(node) and node.name in needing):
            removed.add(i)
    class_edits = _class_method_cuts(body, removed, hidden_module, needing)
    import_edits: dict[int, ImportStmt | None] = {}
    cut_methods = [m for methods in class_edits.values() for m in methods]
    _cut_orphans(_without_cut_methods(body, class_edits), removed, import_edits, cut_methods)
    result = Filtered(_rewrite(source, body, removed, import_edits, class_edits))
    for i, node in enumerate(body):
        tests = _test_names(node)
        if i in removed:
            (result.removed_tests if tests else result.removed_other).extend(tests or sorted(_defined(node)))
        else:
            cut = class_edits.get(i, [])
            result.removed_tests += [m.name for m in cut]
            result.kept_tests += [t for t in tests if t not in {m.name for m in cut}]
    return result


def _test_names(node: ast.stmt) -> list[str]:
    if _is_test(node):
        return [node.name]
    if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
        return [m.name for m in node.body if _is_test(m)]
    return []


def _class_method_cuts(body: list[ast.stmt], removed: set[int], hidden_module: bool,
                       needing: set[str]) -> dict[int, list[FunctionNode]]:
    """Instructor-only methods of kept ``Test*`` classes (a class left empty goes)."""
    cuts: dict[int, list[FunctionNode]] = {}
    for i, node in enumerate(body):
        if i in removed or not _is_test_class(node):
            continue
        methods = [m for m in node.body if _is_test(m) and instructor_only(m, hidden_module, needing)]
        if methods and len(methods) == len([m for m in node.body if _is_test(m)]):
            removed.add(i)
        elif methods:
            cuts[i] = methods
    return cuts


def _without_cut_methods(body: list[ast.stmt], class_edits: dict[int, list[FunctionNode]]) -> list[ast.stmt]:
    """``body`` as it will be, for telling what kept code uses: classes lose their cut methods."""
    view = list(body)
    for i, methods in class_edits.items():
        node = body[i]
        assert isinstance(node, ast.ClassDef)  # _class_method_cuts cuts methods of classes only
        view[i] = ast.ClassDef(name=node.name, bases=node.bases, keywords=node.keywords,
                               body=[m for m in node.body if m not in methods] or [ast.Pass()],
                               decorator_list=node.decorator_list)
    return view


def _cut_orphans(body: list[ast.stmt], removed: set[int], import_edits: dict[int, ImportStmt | None],
                 cut_methods: list[FunctionNode]) -> None:
    """Remove, until nothing changes, definitions and imported names that removed
    code used and nothing kept uses."""
    while True:
        removed_uses = set().union(set(), *(_uses(n) for n in [*(body[i] for i in removed), *cut_methods]))
        changed = False
        for i, node in enumerate(body):
            if i in removed:
                continue
            defined = _defined(node)
            if not defined & removed_uses:
                continue
            kept_uses = set().union(*(_uses(n) for j, n in enumerate(body) if j not in removed and j != i))
            orphans = (defined & removed_uses) - kept_uses
            if not orphans:
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                changed |= _trim_import(i, node, orphans, removed, import_edits)
            elif orphans == defined:
                removed.add(i)
                changed = True
        if not changed:
            return


def _trim_import(i: int, node: ImportStmt, orphans: set[str], removed: set[int],
                 import_edits: dict[int, ImportStmt | None]) -> bool:
    current = import_edits.get(i, node)
    assert current is not None
    names = [a for a in current.names if _bound(a) not in orphans]
    if len(names) == len(current.names):
        return False
    if not names:
        removed.add(i)
        import_edits.pop(i, None)
        return True
    trimmed = ast.ImportFrom(current.module, names, current.level) if isinstance(current, ast.ImportFrom) \
        else ast.Import(names)
    import_edits[i] = trimmed
    return True


def _rewrite(source: str, body: list[ast.stmt], removed: set[int],
             import_edits: dict[int, ImportStmt | None], class_edits: dict[int, list[FunctionNode]]) -> str:
    """The source with removed statements' lines cut and trimmed imports rewritten."""
    lines = source.splitlines()
    drop: set[int] = set()   # 0-based line numbers
    replace: dict[int, str] = {}
    for i in removed:
        drop |= _span(lines, body[i])
    for i, node in import_edits.items():
        if i in removed or node is None:
            continue
        start, end = body[i].lineno - 1, _end_lineno(body[i]) - 1
        replace[start] = ast.unparse(node)
        drop |= set(range(start + 1, end + 1))
    for methods in class_edits.values():
        for m in methods:
            drop |= _span(lines, m)
    kept = [replace.get(n, line) for n, line in enumerate(lines) if n not in drop]
    return _tidy(kept)


def _span(lines: list[str], node: ast.stmt) -> set[int]:
    """A statement's lines, its decorators and the comment lines right above it."""
    start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
    while start > 0 and lines[start - 1].strip().startswith("#"):
        start -= 1
    return set(range(start, _end_lineno(node)))


def _end_lineno(node: ast.stmt) -> int:
    assert node.end_lineno is not None  # ast.parse gives every statement its end
    return node.end_lineno


def _tidy(lines: list[str]) -> str:
    """At most two blank lines in a row, no comment left dangling at the end."""
    while lines and (not lines[-1].strip() or lines[-1].lstrip().startswith("#")):
        lines.pop()
    out: list[str] = []
    for line in lines:
        if not line.strip() and len(out) >= 2 and not out[-1].strip() and not out[-2].strip():
            continue
        out.append(line)
    return "\n".join(out) + "\n"



# ------------------------------------------------------------------ the course's test modules

def course_test_files(root: Path) -> Iterator[Path]:
    """Every python file of the course's tests/ (test modules, conftest, helpers)."""
    return (p for p in sorted((root / "tests").rglob("*.py")) if not SKIPPED_PARTS & set(p.parts))


def _conftest_ref_fixtures(root: Path) -> frozenset[str]:
    names: set[str] = set()
    for path in course_test_files(root):
        if path.name == "conftest.py":
            names |= ref_fixtures(ast.parse(path.read_text(encoding="utf-8")))
    return frozenset(names)


def filtered_tests(root: Path) -> dict[Path, Filtered]:
    """Every test module of the course, cut down to its public part."""
    needing = _conftest_ref_fixtures(root)
    return {path: filter_test_module(path.read_text(encoding="utf-8"), needing)
            for path in course_test_files(root) if path.name.startswith("test_")}


def public_properties(root: Path, filtered: dict[Path, Filtered] | None = None) -> dict[str, list[str]]:
    """Drill id -> the names of its public properties (what a handout can run)."""
    filtered = filtered if filtered is not None else filtered_tests(root)
    by_path = {path.resolve(): drill for drill, path in syllabus.exercise_tests(root).items()}
    return {by_path[p.resolve()]: f.kept_tests for p, f in filtered.items() if p.resolve() in by_path}


def hidden_names(filtered: dict[Path, Filtered]) -> set[str]:
    """Names of every instructor-only test of the course."""
    return {name for f in filtered.values() for name in f.removed_tests}
