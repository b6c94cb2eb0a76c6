"""``torchdrill release OUT``: the student handout, with nothing secret in it.

What goes in: the ``exercises/`` stubs (pristine: ``grader.core.stubs``, so a
course author's own solutions in ``exercises/`` never ship), the grader package (without its own
tests: their mutants and self-checks name hidden tests and need the reference),
the public tests, ``report_templates/``, ``course.toml``, ``pyproject.toml``,
``constraints*.txt``, ``.gitignore``, a ``tox.ini`` with the grading environment
only, and a ``README.md`` for students (``grader/learner/templates/student_README.md.j2``).

The rule for tests: a property is *instructor-only* when it is marked
``pytest.mark.hidden`` (its oracle would give the solution away) or when it needs
the ``ref`` fixture (there is no reference code in a handout to run it with).
Instructor-only tests are cut out of the copied test modules, with whatever only
they used (helpers, fixtures, constants, imports). Every drill must keep at least
one public property, whose oracle is PyTorch itself or an invariant. The official
grade, on the instructor's side, runs all of them.

The handout is written to a temporary folder beside ``OUT``, checked (no function
body of ``reference/``, no instructor-only test name, anywhere; every drill keeps
a public property), and only then renamed to ``OUT``.
"""

from __future__ import annotations

import argparse
import ast
import configparser
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from grader.core import course as course_module
from grader.core.errors import EXIT_OK, UsageError
from grader.core.stubs import write_stubs
from grader.learner.handout_notebooks import NOTEBOOKS_DIR, write_notebooks

REF_FIXTURE = "ref"
COPIED_FILES = ("course.toml", "pyproject.toml", ".gitignore")
COPIED_GLOBS = ("constraints*.txt",)
COPIED_DIRS = ("report_templates",)
SKIPPED_PARTS = {"__pycache__", ".hypothesis", ".pytest_cache", ".tox"}
README_TEMPLATE = Path(__file__).parent / "templates" / "student_README.md.j2"
_HIDDEN_MARK = re.compile(r"(^|\.)mark\.hidden\b")


FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef  # a test, or a fixture
ImportStmt = ast.Import | ast.ImportFrom


class ReleaseError(UsageError):
    """The handout cannot be made, or would leak; one clear sentence (or a list of leaks)."""


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
    by_path = {path.resolve(): drill for drill, path in course_module.exercise_tests(root).items()}
    return {by_path[p.resolve()]: f.kept_tests for p, f in filtered.items() if p.resolve() in by_path}


def hidden_names(filtered: dict[Path, Filtered]) -> set[str]:
    """Names of every instructor-only test of the course."""
    return {name for f in filtered.values() for name in f.removed_tests}


# ------------------------------------------------------------------ checking a handout

def _release_files(out: Path) -> Iterator[Path]:
    return (p for p in sorted(out.rglob("*")) if p.is_file())


def find_leaks(out: Path, root: Path, hidden: Iterable[str]) -> list[str]:
    """Everything in the folder ``out`` that a handout must not hold, one line each."""
    leaks: list[str] = []
    if (out / "reference").exists():
        leaks.append(f"{out / 'reference'}: the reference solutions")
    bodies = reference_bodies(root)
    pattern = _names_pattern(hidden)
    for path in _release_files(out):
        rel = path.relative_to(out).as_posix()
        if path.suffix in (".pyc", ".pyo"):
            leaks.append(f"{rel}: compiled Python (it may hold anything)")
            continue
        try:
            text = path.read_text(encoding="utf-8")
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


# ------------------------------------------------------------------ writing a handout

@dataclass
class Release:
    out: Path
    public: dict[str, list[str]]
    hidden: dict[str, list[str]]
    files: list[str]


def build(root: Path, out: Path, notebooks: bool = False, handout_url: str = "") -> Release:
    """Write the handout of the course at ``root`` to the new folder ``out`` (with
    ``notebooks``, also one notebook per topic: ``grader.learner.handout_notebooks``)."""
    course = _checked_course(root)
    filtered = filtered_tests(root)
    public = public_properties(root, filtered)
    bare = [d for d in course.ids if not public.get(d)]
    if bare:
        raise ReleaseError(f"drill {', '.join(bare)} would have no public property (every test needs "
                           "the reference or is hidden): add one whose oracle is PyTorch or an invariant")
    target = _new_folder(out)
    staging = Path(tempfile.mkdtemp(prefix=".torchdrill-release-", dir=target.parent))
    try:
        _write_handout(root, staging, course, filtered, public, notebooks)
        if notebooks:
            write_notebooks(root, staging, course, handout_url)
        leaks = find_leaks(staging, root, hidden_names(filtered))
        if leaks:
            raise ReleaseError("the handout would leak:\n  " + "\n  ".join(leaks))
        files = [p.relative_to(staging).as_posix() for p in _release_files(staging)]
        if target.exists():
            target.rmdir()  # checked empty by _new_folder
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    by_path = {path.resolve(): drill for drill, path in course_module.exercise_tests(root).items()}
    hidden = {by_path[p.resolve()]: f.removed_tests for p, f in filtered.items() if p.resolve() in by_path}
    return Release(target, public, hidden, files)


def _checked_course(root: Path) -> course_module.Course:
    if not (root / course_module.COURSE_FILE).is_file():
        raise ReleaseError(f"{root} has no {course_module.COURSE_FILE}: a release needs the course "
                           "order and hints (and graders recognise a handout by it)")
    try:
        course = course_module.load(root)
        listed = set(course_module.listed_ids(root))
    except course_module.CourseError as exc:
        raise ReleaseError(str(exc)) from None
    tested = set(course_module.exercise_tests(root))
    if listed != tested:
        raise ReleaseError(f"{course_module.COURSE_FILE} and tests/ disagree: only in "
                           f"{course_module.COURSE_FILE}: {', '.join(sorted(listed - tested)) or 'none'}; "
                           f"only in tests/: {', '.join(sorted(tested - listed)) or 'none'}")
    return course


def _new_folder(out: Path) -> Path:
    out = out.resolve()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ReleaseError(f"{out} already exists and is not an empty folder: choose a new one")
    out.parent.mkdir(parents=True, exist_ok=True)
    return out


def _write_handout(root: Path, out: Path, course: course_module.Course,
                   filtered: dict[Path, Filtered], public: dict[str, list[str]], notebooks: bool = False) -> None:
    write_stubs(root, out / "exercises")  # the stubs as handed out, whatever exercises/ holds now
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
    _student_pyproject(out / "pyproject.toml")
    (out / "tox.ini").write_text(student_tox_ini(root / "tox.ini"), encoding="utf-8")
    (out / "README.md").write_text(student_readme(root, course, public, notebooks), encoding="utf-8")


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


def _student_pyproject(path: Path) -> None:
    """In a handout, a bare ``pytest`` runs the drills' public tests (grader/tests is not there)."""
    if path.is_file():
        text = re.sub(r'^testpaths = .*$', 'testpaths = ["tests"]', path.read_text(encoding="utf-8"),
                      flags=re.MULTILINE)
        path.write_text(text, encoding="utf-8")


def student_tox_ini(path: Path) -> str:
    """The course's tox.ini without the environments that need what a handout lacks
    (the reference, the engine's tests): in practice, ``grade`` and its base."""
    parser = _CaseConfigParser(interpolation=None, default_section="\0none")
    parser.read(path, encoding="utf-8")
    secret = re.compile(r"\breference\b|grader/tests")
    envs = [s for s in parser.sections() if s.startswith("testenv:")
            and not secret.search(parser[s].get("commands", ""))]
    if "testenv:grade" not in envs:
        raise ReleaseError(f"{path} has no [testenv:grade] a handout can run")
    lines = ["# Written by `torchdrill release` from the course's tox.ini: the environments a",
             "# handout can run (no reference solutions or engine tests here).", ""]
    tox = dict(parser["tox"]) if parser.has_section("tox") else {}
    tox["envlist"] = ", ".join(s.removeprefix("testenv:") for s in envs)
    lines += _ini_section("tox", tox)
    if parser.has_section("testenv"):
        base_needs_secrets = bool(secret.search(parser["testenv"].get("commands", "")))
        base = {k: v for k, v in parser["testenv"].items()
                if not (base_needs_secrets and k in ("commands", "description"))}
        lines += _ini_section("testenv", base)
    for name in envs:
        lines += _ini_section(name, dict(parser[name]))
    return "\n".join(lines).rstrip() + "\n"


class _CaseConfigParser(configparser.ConfigParser):
    def optionxform(self, optionstr: str) -> str:
        return optionstr  # keep option names as written


def _ini_section(name: str, options: dict[str, str]) -> list[str]:
    out = [f"[{name}]"]
    for key, value in options.items():
        parts = value.split("\n")
        out.append(f"{key} = {parts[0]}".rstrip())
        out += [f"    {p.strip()}" for p in parts[1:] if p.strip()]
    return out + [""]


def student_readme(root: Path, course: course_module.Course, public: dict[str, list[str]],
                   notebooks: bool = False) -> str:
    """README.md of a handout, from ``grader/learner/templates/student_README.md.j2``."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(README_TEMPLATE.parent)),
                             autoescape=False, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["number"] = lambda x: "?" if x is None else f"{x:g}"
    topics: list[dict[str, Any]] = [{"title": t.title, "drills": [_drill_row(root, d, public) for d in t.drills]}
                                    for t in course.topics]
    total = sum(d["points"] or 0 for t in topics for d in t["drills"])
    first = course.drills[0] if course.drills else None
    return env.get_template(README_TEMPLATE.name).render(
        title=course.title, topics=topics, total=total, notebooks=notebooks,
        first=first.name if first else "NAME", first_id=first.id if first else "topic/NAME")


def _drill_row(root: Path, drill: course_module.Drill, public: dict[str, list[str]]) -> dict[str, Any]:
    facts = course_module.drill_facts(root, drill.id)
    return {"id": drill.id, "name": drill.name, "points": facts["points"], "title": facts["title"],
            "hints": len(drill.hints), "public": len(public.get(drill.id, []))}


# ------------------------------------------------------------------ the command

def cmd_release(args: argparse.Namespace) -> int:
    root = Path(args.course).resolve() if args.course else course_module.find_course(Path.cwd())
    try:
        made = build(root, Path(args.out), notebooks=getattr(args, "notebooks", False),
                     handout_url=getattr(args, "handout_url", None) or "")
    except ReleaseError as exc:
        raise UsageError(f"no release written: {exc}") from None
    print(f"release: {made.out} ({len(made.files)} files)")
    for drill, names in made.public.items():
        left_out = len(made.hidden.get(drill, []))
        print(f"  {drill}: {len(names)} public properties, {left_out} instructor-only left out")
    notebooks = [f for f in made.files if f.startswith(f"{NOTEBOOKS_DIR}/")]
    if notebooks:
        print(f"notebooks: {', '.join(notebooks)} (one per topic: set-up, each drill's spec, stub and check)")
    print("checked: no reference code, no instructor-only test name; "
          f"grade it with `cd {made.out} && tox -e grade`")
    return EXIT_OK
