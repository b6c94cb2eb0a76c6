"""A Jupyter or Colab notebook handed in as a submission, read into exercise files.

The grader never runs a student's cells on the trusted side. ``extract`` reads the
notebook's JSON with nbformat (no kernel), parses each code cell with ``ast`` and
keeps only what a module of drill functions needs:

- shell and magic lines (``!pip install``, ``%matplotlib``, ``x = !ls``, ``obj?``)
  become ``pass`` (same line numbers); a cell magic (``%%bash``) drops its cell,
  except ``%%time``, ``%%timeit`` and ``%%capture``, whose body is Python;
- of each cell's top-level statements: imports, function and class definitions
  (with their decorators), and assignments of constants (literals, names,
  attributes, arithmetic: no calls); calls, prints, loops and the rest are dropped.

Each drill's functions (the names its stub in ``exercises/`` defines) are then
mapped to the drill's file by name. A drill's file holds every import of the
notebook, the constants and helper definitions its functions use (by name,
transitively), and its functions, each the *last* definition in the notebook.
A function the notebook never defines comes from the stub (``raise
NotImplementedError``: that part is "not attempted"); a drill none of whose
functions is defined gets no file ("not attempted"). A cell that does not parse
makes every drill whose function it seems to define (a ``def NAME`` line) an
``error`` whose message names the notebook, the cell and the line, unless a
later cell defines the function again.

Cells are numbered from 1 in notebook order, markdown cells included (what a
student counts scrolling down). ``Extraction.functions`` says which cell and line
each graded function came from; ``grader.intake.cell_lines.annotate`` puts that into
the results (``ExerciseResult.source``) and maps line numbers in messages back to cells.

Everything is bounded: the notebook's size (``MAX_NOTEBOOK_BYTES``), its code
(``MAX_CODE_CHARS``), the cells (``MAX_CELLS``); a cell that is too deeply nested
for ``ast`` counts as not parsing.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.core.errors import NotGradable
from grader.core.i18n import _
from grader.core.sources import MAX_SOURCE_BYTES, MAX_SUBMISSION_BYTES, mib
from grader.core.sources import read as read_source
from grader.core.stubs import stub_source

NOTEBOOK_SUFFIX = ".ipynb"
MAX_NOTEBOOK_BYTES = 32 * 2**20  # outputs (plots) make notebooks big; only code is kept
MAX_CODE_CHARS = MAX_SUBMISSION_BYTES  # all code cells together
MAX_CELLS = 5_000
PYTHON_CELL_MAGICS = ("%%time", "%%timeit", "%%capture")
_DEF_LINE = re.compile(r"^(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(", re.MULTILINE)
_MAGIC_LINE = re.compile(r"^\s*[!%]|^\s*[\w.]+\s*=\s*[!%]|\?\s*$")
HEADER = "# Extracted by torchdrill from {name}: only imports, definitions and constants are kept.\n"


class NotebookProblem(NotGradable):
    """The notebook cannot be read as a submission at all; one sentence naming it."""


@dataclass(frozen=True)
class Origin:
    """Where a graded definition came from: ``cell`` (1-based, all cells counted) and
    the ``line`` of its ``def`` in that cell (1-based)."""

    name: str
    cell: int
    line: int


@dataclass
class Extraction:
    """A notebook read as exercise files.

    ``files``: path (``tensors/one_hot.py``) -> source bytes, as graded;
    ``functions``: drill id -> the origin of each of its functions the notebook
    defines; ``stubbed``: drill id -> its functions taken from the stub;
    ``broken``: drill id -> the message of the cell that does not parse;
    ``line_map``: drill id -> [(first file line, last file line, cell, first cell line)];
    ``dropped_cells``: cells skipped whole (cell magics), with why.
    """

    notebook: str
    files: dict[str, bytes] = field(default_factory=dict)
    functions: dict[str, list[Origin]] = field(default_factory=dict)
    stubbed: dict[str, list[str]] = field(default_factory=dict)
    broken: dict[str, str] = field(default_factory=dict)
    line_map: dict[str, list[tuple[int, int, int, int]]] = field(default_factory=dict)
    dropped_cells: list[str] = field(default_factory=list)

    def source(self, drill: str) -> dict[str, Any] | None:
        """What ``ExerciseResult.source`` records for ``drill`` (None: not from here)."""
        if f"{drill}.py" not in self.files:
            return None
        out: dict[str, Any] = {
            "notebook": self.notebook,
            "functions": [{"name": o.name, "cell": o.cell, "line": o.line}
                          for o in self.functions.get(drill, [])],
            "from_stub": list(self.stubbed.get(drill, [])),
        }
        if drill in self.broken:
            out["problem"] = self.broken[drill]
        return out

    def as_json(self) -> dict[str, Any]:
        """Everything ``annotate`` needs, as JSON (it travels with a grading job)."""
        return {"notebook": self.notebook,
                "sources": {d.removesuffix(".py"): self.source(d.removesuffix(".py"))
                            for d in sorted(self.files)},
                "line_map": {d: [list(r) for r in rows] for d, rows in self.line_map.items()}}


# ------------------------------------------------------------------ the course side

@dataclass(frozen=True)
class Stub:
    """A drill's stub as a notebook's functions map to it: its top-level functions
    (name -> source) and its imports (what those sources need)."""

    functions: dict[str, str]
    imports: tuple[str, ...] = ()


def drill_functions(course: Path, drill_ids: list[str]) -> dict[str, Stub]:
    """Drill id -> its ``Stub``, read from the course's ``exercises/`` as handed out
    (``stub_source``: a learner's or an instructor's work there is not the stub, and
    neither is a private helper it added); a drill without a readable stub is left out:
    no notebook function maps to it."""
    out: dict[str, Stub] = {}
    for drill in drill_ids:
        path = course / "exercises" / f"{drill}.py"
        try:
            text = stub_source(path.read_text(encoding="utf-8"))
            tree = ast.parse(text)
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
        lines = text.splitlines(keepends=True)
        out[drill] = Stub({node.name: _segment(lines, node) for node in tree.body
                           if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                           and not node.name.startswith("_")},
                          tuple(_segment(lines, node) for node in tree.body
                                if isinstance(node, (ast.Import, ast.ImportFrom))))
    return out


# ------------------------------------------------------------------ reading

def read_bytes(path: Path) -> bytes:
    """A notebook file's bytes, read by the one rule for submission files (no link
    followed, a regular file, at most ``MAX_NOTEBOOK_BYTES``)."""
    try:
        data = read_source(path, MAX_NOTEBOOK_BYTES)
    except OSError as exc:
        raise NotebookProblem(_("{label} cannot be read: {error}", label=path.name, error=exc)) from None
    if data is None:
        raise NotebookProblem(_("{name} is not a regular file of at most {limit}", name=path.name,
                                limit=mib(MAX_NOTEBOOK_BYTES)))
    return data


def code_cells(name: str, data: bytes) -> list[tuple[int, str]]:
    """(cell number, source) of every code cell; ``NotebookProblem`` when ``data`` is
    not a notebook. Cells are numbered from 1, markdown cells included."""
    if len(data) > MAX_NOTEBOOK_BYTES:
        raise NotebookProblem(_("{name} is {size} (at most {limit})", name=name, size=mib(len(data)),
                                limit=mib(MAX_NOTEBOOK_BYTES)))
    import nbformat

    try:
        text = data.decode("utf-8-sig")
        raw = nbformat.reader.reads(text)  # JSON and version only: never validated into failing
        notebook = nbformat.convert(raw, 4)
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError,
            RecursionError, nbformat.reader.NotJSONError) as exc:
        raise NotebookProblem(_("{name} is not a Jupyter notebook ({kind}: {error})", name=name,
                                kind=type(exc).__name__, error=str(exc)[:200])) from None
    except Exception as exc:  # noqa: BLE001 - nbformat's own errors on odd documents
        raise NotebookProblem(_("{name} is not a readable Jupyter notebook ({kind}: {error})", name=name,
                                kind=type(exc).__name__, error=str(exc)[:200])) from None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        raise NotebookProblem(_("{name} is not a Jupyter notebook (it has no list of cells)", name=name))
    if len(cells) > MAX_CELLS:
        raise NotebookProblem(_("{name} has {count} cells (at most {limit})", name=name,
                                count=f"{len(cells):,}", limit=f"{MAX_CELLS:,}"))
    out: list[tuple[int, str]] = []
    total = 0
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list):
            source = "".join(s for s in source if isinstance(s, str))
        if not isinstance(source, str):
            continue
        total += len(source)
        if total > MAX_CODE_CHARS:
            raise NotebookProblem(_("{name}: its code cells come to more than {limit}", name=name,
                                    limit=mib(MAX_CODE_CHARS)))
        out.append((number, source))
    return out


# ------------------------------------------------------------------ one cell

@dataclass
class _Statement:
    kind: str  # "import", "future", "def", "const"
    names: set[str]
    uses: set[str]
    text: str
    cell: int
    line: int  # first line in the cell (decorators included)
    def_line: int  # the ``def``/``class`` line (the first line otherwise)


@dataclass
class _Broken:
    cell: int
    line: int
    message: str
    names: set[str]


def clean_magics(source: str) -> tuple[str | None, str]:
    """The cell's Python with shell and magic lines as ``pass`` (line numbers kept),
    or (None, why) for a cell magic whose body is not Python. A cell that parses as
    Python is left as it is (a continuation line may start with ``%``)."""
    try:
        ast.parse(source)
        return source, ""
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    lines = source.split("\n")
    first = lines[0].strip() if lines else ""
    if first.startswith("%%"):
        magic = first.split()[0]
        if magic not in PYTHON_CELL_MAGICS:
            return None, f"a {magic} cell"
        lines[0] = ""
    out = []
    for line in lines:
        if _MAGIC_LINE.search(line) and not _is_python_line(line):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}pass")
        else:
            out.append(line)
    return "\n".join(out), ""


def _is_python_line(line: str) -> bool:
    """A line the magic pattern caught that is Python after all (``a != b``, ``x %= 2``,
    a ``?`` inside a string or comment)."""
    stripped = line.strip()
    if stripped.startswith(("!", "%")):
        return False
    if re.match(r"^\s*[\w.]+\s*=\s*[!%]", line):
        return False
    try:  # ``obj?``: help, unless the line parses as it is
        ast.parse(stripped)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def _segment(lines: list[str], node: ast.stmt) -> str:
    start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    return "".join(lines[start - 1: node.end_lineno]).rstrip("\n") + "\n"


_CONSTANT_NODES = (ast.Constant, ast.Name, ast.Attribute, ast.Tuple, ast.List, ast.Set, ast.Dict,
                   ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Subscript, ast.Slice,
                   ast.Load, ast.Store, ast.operator, ast.unaryop, ast.boolop, ast.cmpop,
                   ast.IfExp, ast.Starred)


def is_constant(value: ast.AST | None) -> bool:
    """An expression that computes a constant without calling anything."""
    return value is not None and all(isinstance(n, _CONSTANT_NODES) for n in ast.walk(value))


def _names_used(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


# The grader's own modules: a handout notebook imports them to check itself; graded
# code never needs them (and a sandboxed worker must not import the grader's tests).
OWN_MODULES = ("grader", "torchdrill")


def _own_module(node: ast.Import | ast.ImportFrom) -> bool:
    modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
    return any(m.split(".")[0] in OWN_MODULES for m in modules)


def _statements(cell: int, source: str) -> list[_Statement]:
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    out = []
    for node in tree.body:
        text = _segment(lines, node)
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            out.append(_Statement("future", set(), set(), text, cell, first, node.lineno))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if _own_module(node) or (isinstance(node, ast.ImportFrom) and node.level):
                continue
            names = {a.asname or a.name.split(".")[0] for a in node.names}
            out.append(_Statement("import", names, set(), text, cell, first, node.lineno))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append(_Statement("def", {node.name}, _names_used(node), text, cell, first, node.lineno))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and is_constant(node.value):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if all(isinstance(t, (ast.Name, ast.Tuple)) for t in targets):
                names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
                uses = _names_used(node.value) if node.value is not None else set()
                out.append(_Statement("const", names, uses, text, cell, first, node.lineno))
    return out


# ------------------------------------------------------------------ the whole notebook

def extract(name: str, data: bytes, functions: dict[str, Stub]) -> Extraction:
    """Read notebook ``data`` (file name ``name``) into exercise files, given each
    drill's functions (``drill_functions``). Raises ``NotebookProblem`` when it is no
    notebook; a cell that does not parse is recorded, never raised."""
    result = Extraction(notebook=name)
    statements: list[_Statement] = []
    broken: list[_Broken] = []
    for cell, source in code_cells(name, data):
        python, why = clean_magics(source)
        if python is None:
            result.dropped_cells.append(f"cell {cell}: {why}, not Python")
            continue
        try:
            statements += _statements(cell, python)
        except SyntaxError as exc:
            line = exc.lineno or 1
            message = f"cell {cell} of {name} does not parse (line {line} of the cell: {exc.msg})"
            broken.append(_Broken(cell, line, message, set(_DEF_LINE.findall(python))))
        except (ValueError, RecursionError, MemoryError) as exc:
            message = f"cell {cell} of {name} cannot be parsed ({type(exc).__name__}: nested too deeply?)"
            broken.append(_Broken(cell, 1, message, set(_DEF_LINE.findall(python))))
    order = {id(s): i for i, s in enumerate(statements)}
    last: dict[str, _Statement] = {}
    for s in statements:
        if s.kind in ("def", "const"):
            for n in s.names:
                last[n] = s
    broken_last: dict[str, _Broken] = {}
    for b in broken:
        for n in b.names:
            if n not in last or last[n].cell <= b.cell:
                broken_last[n] = b
    imports = [s for s in statements if s.kind == "import"]
    future = _unique(s for s in statements if s.kind == "future")
    for drill, stub in sorted(functions.items()):
        stubs = stub.functions
        own = [n for n in stubs if n in last and last[n].kind == "def" and n not in broken_last]
        bad = [broken_last[n] for n in stubs if n in broken_last]
        if bad:
            first = min(bad, key=lambda b: (b.cell, b.line))
            names = ", ".join(sorted(f"{n}()" for n in stubs if n in broken_last))
            message = f"{first.message}, so {names} cannot be graded: fix that cell and hand it in again"
            result.broken[drill] = message
            where = (name, 2, 1, "")  # line 2 of the file: mapped to the cell's line below
            result.files[f"{drill}.py"] = (HEADER.format(name=name)
                                           + f"raise SyntaxError({message!r}, {where!r})\n").encode()
            result.line_map[drill] = [(2, 2, first.cell, first.line)]
            continue
        if not own:
            continue
        needed = _closure([last[n] for n in own], last)
        body = sorted(needed, key=lambda s: order[id(s)])
        used = set().union(*(s.uses for s in body))
        wanted = _unique(s for s in imports if s.names & used)
        missing = [n for n in stubs if n not in own]
        result.functions[drill] = sorted((Origin(n, last[n].cell, last[n].def_line) for n in own),
                                         key=lambda o: (o.cell, o.line))
        result.stubbed[drill] = missing
        text, rows = _assemble(name, [*future, *wanted, *body],
                               [stubs[n] for n in missing], stub.imports if missing else ())
        data_out = text.encode("utf-8")
        if len(data_out) > MAX_SOURCE_BYTES:
            raise NotebookProblem(_("{name}: the code of {drill} comes to {size} (at most {limit})", name=name,
                                    drill=drill, size=mib(len(data_out)), limit=mib(MAX_SOURCE_BYTES)))
        result.files[f"{drill}.py"] = data_out
        result.line_map[drill] = rows
    return result


def _unique(statements: Any) -> list[_Statement]:
    seen: set[str] = set()
    out = []
    for s in statements:
        if s.text not in seen:
            seen.add(s.text)
            out.append(s)
    return out


def _closure(roots: list[_Statement], last: dict[str, _Statement]) -> list[_Statement]:
    """``roots`` and every definition or constant they use, transitively (by name)."""
    found: dict[int, _Statement] = {id(s): s for s in roots}
    todo = list(roots)
    while todo:
        s = todo.pop()
        for n in s.uses:
            d = last.get(n)
            if d is not None and id(d) not in found:
                found[id(d)] = d
                todo.append(d)
    return list(found.values())


def _assemble(name: str, statements: list[_Statement], stubs: list[str], stub_imports: tuple[str, ...]
              ) -> tuple[str, list[tuple[int, int, int, int]]]:
    """The drill's file: a header line, the statements (imports first), then the
    stub's own imports and functions for what the notebook left undefined."""
    parts = [HEADER.format(name=name)]
    line = 2  # the next line of the file
    rows = []
    for s in statements:
        block = s.text if s.kind in ("import", "future") else "\n" + s.text
        if s.kind not in ("import", "future"):
            line += 1
        n = s.text.count("\n")
        rows.append((line, line + n - 1, s.cell, s.line))
        parts.append(block)
        line += n
    if stubs:
        parts.append("\n# not defined in the notebook: the stub's\n" + "".join(stub_imports))
    for stub in stubs:
        parts.append("\n" + stub)
    return "".join(parts), rows


def is_notebook_name(name: str) -> bool:
    return name.lower().endswith(NOTEBOOK_SUFFIX) and len(name) > len(NOTEBOOK_SUFFIX)


def dumps_cells(cells: list[tuple[str, str]]) -> str:
    """A minimal v4 notebook of (cell type, source) cells, as JSON text (for tests and
    for people writing one by hand)."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    for kind, source in cells:
        nb.cells.append(nbformat.v4.new_code_cell(source) if kind == "code"
                        else nbformat.v4.new_markdown_cell(source))
    return str(nbformat.writes(nb))

