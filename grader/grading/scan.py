"""Flag forbidden APIs in a submission's source, for the instructor to look at.

The worker refuses forbidden calls at run time (``grader.contract.forbid``); that is what
costs points. This scan only reads the source, so it also sees uses the tests
never reached (a branch no example took, a helper never called) and spellings
meant to slip past a reviewer (``import torch.nn.functional as nnf``,
``getattr(F, "one_hot")``, ``importlib.import_module``). Its findings never
change a score: they are shown beside it.

It works on ``ast`` alone and never imports the submission, so comments and
strings are never flagged and hostile code never runs in the grader. Names are
resolved statically and flow-insensitively: every import binding in the file
(and every plain ``name = F.one_hot``), wherever it is, counts for every use. Receivers are untyped, so a forbidden
tensor method (``Tensor.stride``) is flagged wherever ``.stride`` is read.
"""

from __future__ import annotations

import ast
import functools
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from grader.contract.forbid import canonical_name, members, resolve
from grader.core import sources

MAX_CODE_CHARS = 200  # a finding quotes its line; a minified line must not bloat the report
MAX_FLAGS = 50  # per exercise in results.json: enough to make the point, bounded for hostile files
# Longer attribute chains than this cannot name an API (the longest forbidden path has a
# handful of parts): walking each node's whole chain made a crafted 1 MiB file quadratic.
MAX_CHAIN = 32
SCAN_SECONDS = 5.0  # per file; past it the scan stops and says so (the grader's own CPU)
STOPPED = "(scan stopped)"
# Routes around a guard, flagged (``indirect``) in any drill that forbids something: the
# worker refuses what it can (grader.sandbox.armor), and these tell the instructor where
# a submission went looking for another way in.
# torch's twins of its own API (``torch._refs``, ``torch._decomp``, ``torch._prims``) and the
# ways to read its source and run it again (``torch.__file__`` stands for the file of any
# torch module: ``fusion.__file__``, ``__spec__``, ``__loader__``) are routes too.
ESCAPES = ("torch.ops", "torch._C", "torch.overrides", "torch.library", "sys.setprofile",
           "sys.settrace", "sys._getframe", "threading", "_thread", "concurrent.futures",
           "multiprocessing", "gc", "ctypes", "inspect", "builtins.exec",
           "builtins.eval", "builtins.compile", "os.write", "socket",
           "torch._refs", "torch._decomp", "torch._prims", "torch._prims_common",
           "torch._meta_registrations", "torch.__file__", "runpy", "linecache", "importlib.util",
           "importlib.machinery", "importlib.resources", "importlib.reload", "importlib.abc",
           "pkgutil", "marshal", "numpy",  # numpy does forbidden work by another name (forbid.NUMPY_BRIDGES)
           "grader")  # the grader's own modules: a sandbox worker refuses to import them
# Attributes that lead from a torch module to its files.
_SOURCE_ATTRIBUTES = frozenset({"__file__", "__spec__", "__loader__", "__cached__", "__path__"})
_BUILTIN_ESCAPES = {"exec": "builtins.exec", "eval": "builtins.eval", "compile": "builtins.compile"}
_TENSOR = "torch.Tensor."
_IMPORTERS = {"importlib.import_module", "builtins.__import__"}


@dataclass(frozen=True)
class Finding:
    """One use of a forbidden API: ``name`` as the drill spells it (``F.one_hot``),
    1-based ``line`` and ``col`` (as editors count), the source line stripped.
    ``indirect``: a dynamic import of a module holding the API, not a use of it."""

    name: str
    line: int
    col: int
    code: str
    indirect: bool = False

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Rules:
    """The drill's forbid spec, prepared for matching."""

    dotted: dict[str, str]  # full dotted path (canonical or where it is defined) -> drill's name
    methods: dict[str, str]  # tensor method name -> drill's name
    # the forbidden APIs' full names, and the stems their namesakes in torch may have
    # (grader.sandbox.armor.namesake_stems): most sources name none, and then torch's
    # source is never read for them
    forbidden: tuple[str, ...] = ()
    stems: frozenset[str] = frozenset()

    @classmethod
    def of(cls, forbid: Mapping[str, str]) -> _Rules:
        from grader.sandbox.armor import namesake_stems

        dotted: dict[str, str] = {}
        methods: dict[str, str] = {}
        stems: set[str] = set()
        forbidden: dict[str, None] = {}
        for name in forbid:
            for full in [canonical_name(name), *members(canonical_name(name))]:  # a module: its APIs too
                dotted.setdefault(full, name)
                forbidden[full] = None
                if full.startswith(_TENSOR) and full.count(".") == 2:
                    methods.setdefault(full.rpartition(".")[2], name)
                home = _defined_at(full)
                if home:
                    dotted.setdefault(home, name)
                stems.update(*namesake_stems(full))
        return cls(dotted, methods, tuple(forbidden), frozenset(stems))

    @functools.cached_property
    def namesakes(self) -> dict[str, dict[str, str]]:
        """torch's namesakes of the forbidden APIs (``grader.sandbox.armor.namesake_sites``):
        module -> {function or method name -> drill's name}."""
        from grader.sandbox.armor import namesake_sites

        found: dict[str, dict[str, str]] = {}
        for full in self.forbidden:
            for module, attr in namesake_sites(full):
                found.setdefault(module, {}).setdefault(attr, self.dotted[full])
        return found

    def namesake(self, path: str) -> str | None:
        """The drill's name whose namesake ``path`` reaches (``torch.distributed.fsdp.
        sharded_grad_scaler.ShardedGradScaler._amp_update_scale_cpu_``), if any."""
        from grader.sandbox.armor import namesake_stem

        module, _, attr = path.rpartition(".")
        if not module or namesake_stem(attr) not in self.stems:
            return None
        while module:
            found = self.namesakes.get(module, {}).get(attr)
            if found is not None:
                return found
            module = module.rpartition(".")[0]
        return None

    def held_by(self, module: str) -> list[str]:
        """The drill's names that live in ``module`` or below it (sorted, once each)."""
        prefix = module + "."
        return sorted({n for path, n in self.dotted.items() if path.startswith(prefix)})


def _defined_at(full: str) -> str | None:
    """Where the object behind ``full`` is defined (``torch.utils.data.DistributedSampler``
    -> ``torch.utils.data.distributed.DistributedSampler``), so importing it from its
    home module is caught too. ``None`` when torch cannot say."""
    try:
        obj = resolve(full)
    except Exception:  # noqa: BLE001 - an API this torch lacks is still matched by its name
        return None
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        return None
    home = f"{module}.{qualname}"
    return home if home != full else None


def scan_source(source: str, forbid: Mapping[str, str] | None,
                filename: str = "<submission>", seconds: float = SCAN_SECONDS) -> list[Finding]:
    """Every use of a forbidden API in ``source``, in source order.

    A file that does not parse gives ``[]``: the loader reports the syntax error,
    and a scan of half a file would mislead.
    """
    if not forbid:
        return []
    try:
        tree = ast.parse(source, filename=filename)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    lines = source.splitlines()
    scanner = _Scanner(_Rules.of(forbid), _bindings(tree), time.monotonic() + seconds)
    found: dict[tuple, Finding] = {}
    stopped = Finding(STOPPED, 0, 0, f"the scan of this file ran past {seconds:g} s and stopped: "
                                     "the flags above may be incomplete")
    try:
        if not scanner.follow_assignments(tree):
            return [stopped]
        for key, finding in scanner.findings(tree, lines):
            if key is not None and finding is not None:
                found.setdefault(key, finding)  # a direct use beats the import call inside it
            elif time.monotonic() > scanner.deadline:
                found[(STOPPED,)] = stopped
                break
    except RecursionError:  # absurdly nested code: nothing trustworthy to say
        return []
    drill_apis = {(f.line, f.col) for f in found.values() if f.name not in ESCAPES}
    kept = [f for f in found.values()  # a route the forbidden use itself took says nothing more
            if f.name not in ESCAPES or (f.line, f.col) not in drill_apis]
    return sorted(kept, key=lambda f: (f.line == 0, f.line, f.col, f.name))


def scan_file(path: Path | str, forbid: Mapping[str, str] | None) -> list[Finding]:
    """``scan_source`` of a file; ``[]`` when it is missing, not a regular file
    (a symlink could point the grader at files outside the submission), too big,
    or not UTF-8 text."""
    if not forbid:
        return []
    try:
        data = sources.read(path)
    except OSError:
        return []
    if data is None:
        return []
    try:
        source = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return []
    return scan_source(source, forbid, str(path))


def flags_for(submission_root: Path, exercise_id: str,
              forbid: Mapping[str, str] | None, source: bytes | None = None) -> list[dict[str, Any]]:
    """``static_flags`` of one exercise in ``results.json``: the first ``MAX_FLAGS``
    findings in ``submission_root/<exercise_id>.py`` as plain dicts (``[]`` if it is
    missing). ``source``: the file's bytes as the intake read them (not read again)."""
    if not forbid:
        return []
    path = Path(submission_root) / f"{exercise_id}.py"
    if source is not None:
        try:
            text = source.decode("utf-8-sig")
        except UnicodeDecodeError:
            return []
        return [f.as_json() for f in scan_source(text, forbid, str(path))[:MAX_FLAGS]]
    try:  # a symlinked folder inside the submission must not lead the grader out of it
        if not path.resolve().is_relative_to(Path(submission_root).resolve()):
            return []
    except (OSError, RuntimeError):
        return []
    return [f.as_json() for f in scan_file(path, forbid)[:MAX_FLAGS]]


# ------------------------------------------------------------------ resolution

def _bindings(tree: ast.AST) -> tuple[dict[str, str], list[str]]:
    """Local name -> dotted path for every import in the file, and the modules
    star-imported (``from torch.nn.functional import *``)."""
    names: dict[str, str] = {}
    stars: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    names[a.asname] = a.name
                else:  # ``import torch.nn.functional`` binds ``torch``
                    head = a.name.partition(".")[0]
                    names[head] = head
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                if a.name == "*":
                    stars.append(node.module)
                else:
                    names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names, stars


def _escape(path: str) -> str | None:
    """The route around a guard that ``path`` takes (``torch.ops`` for
    ``torch.ops.aten.one_hot``; ``torch.__file__`` for ``torch.nn.utils.fusion.__file__``),
    or None."""
    head, _, last = path.rpartition(".")
    if last in _SOURCE_ATTRIBUTES and (head == "torch" or head.startswith("torch.")):
        return "torch.__file__"
    return next((e for e in ESCAPES if path == e or path.startswith(e + ".")), None)


def _const_str(node: ast.AST) -> str | None:
    """The value of a string built from constants only: ``"one_" + "hot"``, f-strings
    of constants. Anything computed at run time gives ``None``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _const_str(node.left), _const_str(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.JoinedStr):
        parts = [_const_str(v) for v in node.values]
        return None if None in parts else "".join(parts)  # type: ignore[arg-type]
    return None


class _Scanner:
    def __init__(self, rules: _Rules, bindings: tuple[dict[str, str], list[str]], deadline: float):
        self.rules = rules
        self.names, self.stars = bindings
        self.deadline = deadline
        self._paths: dict[int, tuple[int, str | None]] = {}  # id(node) -> (links, path)

    def follow_assignments(self, tree: ast.AST, passes: int = 3) -> bool:
        """Bind ``G = F`` and ``encode = F.one_hot`` like imports, so ``G.one_hot(x)`` and
        ``encode(x)`` resolve too. Flow-insensitive like the rest: the first static
        value a name is given counts, and an import binding is never overridden.
        False when the deadline passed first."""
        assigns = [(n.targets[0].id, n.value) for n in ast.walk(tree)
                   if isinstance(n, ast.Assign) and len(n.targets) == 1
                   and isinstance(n.targets[0], ast.Name)]
        for _ in range(passes):  # ``G = F`` then ``H = G``: a few passes settle chains
            changed = False
            self._paths.clear()  # paths depend on the names bound so far
            for n, (name, value) in enumerate(assigns):
                if n % 256 == 0 and time.monotonic() > self.deadline:
                    return False
                if name not in self.names and (path := self.dotted(value)) is not None:
                    self.names[name] = path
                    changed = True
            if not changed:
                break
        self._paths.clear()
        return True

    def dotted(self, node: ast.AST) -> str | None:
        """The dotted path an expression statically names, if any: ``F.one_hot``,
        ``getattr(F, "one_hot")``, ``vars(F)["one_hot"]``, ``importlib.import_module("torch.nn")``.

        Iterative along attribute chains, which may be long, and remembered per node,
        so the links of a chain are walked once, not once per node of it (a crafted
        file of long chains made a naive walk quadratic). A chain of more than
        ``MAX_CHAIN`` links names nothing."""
        chain: list[tuple[ast.AST, str]] = []  # (node, attribute it reads), outermost first
        while id(node) not in self._paths:
            step = self._link(node)
            if step is None:
                self._paths[id(node)] = (0, self._base(node))
                break
            chain.append((node, step[0]))
            node = step[1]
        links, path = self._paths[id(node)]
        for outer, attr in reversed(chain):
            links += 1
            path = None if path is None or links > MAX_CHAIN else f"{path}.{attr}"
            self._paths[id(outer)] = (links, path)
        return path

    def _link(self, node: ast.AST) -> tuple[str, ast.AST] | None:
        """(attribute, owner) when ``node`` reads an attribute of another expression:
        ``owner.attr``, ``getattr(owner, "attr")``, ``owner.__dict__["attr"]``, ``vars(owner)["attr"]``."""
        if isinstance(node, ast.Attribute):
            return node.attr, node.value
        attr = self._getattr_name(node) if isinstance(node, ast.Call) else None
        if attr is not None:
            return attr, node.args[0]  # type: ignore[attr-defined]
        if isinstance(node, ast.Subscript) and (key := _const_str(node.slice)) is not None:
            owner = self._namespace_of(node.value)
            if owner is not None:
                return key, owner
        return None

    def _base(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            if node.id in self.names:
                return self.names[node.id]
            if node.id == "__import__":
                return "builtins.__import__"
            for module in self.stars:
                if f"{module}.{node.id}" in self.rules.dotted:
                    return f"{module}.{node.id}"
            return None
        if isinstance(node, ast.Call):
            return self._imported_module(node)
        return None

    def _getattr_name(self, node: ast.Call) -> str | None:
        """``"one_hot"`` for ``getattr(F, "one_hot")`` (with or without a default)."""
        if (isinstance(node.func, ast.Name) and node.func.id == "getattr"
                and 2 <= len(node.args) <= 3 and not node.keywords):
            return _const_str(node.args[1])
        return None

    def _namespace_of(self, node: ast.AST) -> ast.AST | None:
        """``F`` for ``F.__dict__`` and ``vars(F)``: subscripting them is attribute access."""
        if isinstance(node, ast.Attribute) and node.attr == "__dict__":
            return node.value
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars"
                and len(node.args) == 1):
            return node.args[0]
        return None

    def _imported_module(self, node: ast.Call) -> str | None:
        """The module a constant ``importlib.import_module``/``__import__`` call returns."""
        importer = self.dotted(node.func) if node.args else None
        if importer not in _IMPORTERS:
            return None
        module = _const_str(node.args[0])
        if module is None or not all(p.isidentifier() for p in module.split(".")):
            return None
        if importer == "builtins.__import__":
            fromlist = node.args[3] if len(node.args) > 3 else next(
                (k.value for k in node.keywords if k.arg == "fromlist"), None)
            if not (isinstance(fromlist, (ast.List, ast.Tuple)) and fromlist.elts):
                return module.partition(".")[0]  # __import__("a.b") returns package a
        return module

    def findings(self, tree: ast.AST, lines: list[str]) -> Iterator[tuple[tuple | None, Finding | None]]:
        """Every finding as ((name, line, col), Finding); now and then ``(None, None)``,
        so the caller can keep its clock even where nothing is found."""
        def at(node: ast.AST, name: str, indirect: bool = False) -> tuple[tuple, Finding]:
            line = getattr(node, "lineno", 0)
            col = getattr(node, "col_offset", 0) + 1
            code = lines[line - 1].strip() if 0 < line <= len(lines) else ""
            if len(code) > MAX_CODE_CHARS:
                code = code[:MAX_CODE_CHARS - 3] + "..."
            return (name, line, col), Finding(name, line, col, code, indirect)

        rules = self.rules
        for n, node in enumerate(ast.walk(tree)):
            if n % 256 == 0:
                yield None, None
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    name = rules.dotted.get(f"{node.module}.{a.name}")
                    if name:
                        yield at(node, name)
                    elif name := rules.namesake(f"{node.module}.{a.name}"):
                        yield at(node, name, indirect=True)
                    elif escape := _escape(f"{node.module}.{a.name}"):
                        yield at(node, escape, indirect=True)
                continue
            if isinstance(node, ast.Import):
                for a in node.names:  # ``import torch.nn.utils.fusion.fuse_conv_bn_eval`` fails,
                    name = rules.dotted.get(a.name)  # but a module may itself be forbidden
                    if name:
                        yield at(node, name)
                    elif escape := _escape(a.name):
                        yield at(node, escape, indirect=True)
                continue
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and node.value.partition(".")[0] == "numpy":  # ``_import_dotted_name("numpy.bincount")``
                yield at(node, "numpy", indirect=True)
                continue
            if isinstance(node, ast.Attribute) and node.attr == "__getattribute__":  # past a module's own
                yield at(node, "__getattribute__", indirect=True)
                continue
            if not isinstance(node, (ast.Attribute, ast.Name, ast.Call, ast.Subscript)):
                continue
            if isinstance(node, (ast.Name, ast.Attribute)) and not isinstance(node.ctx, ast.Load):
                continue  # ``self.stride = 2`` binds a name, it uses no API
            path = self.dotted(node)
            if path is not None and path in rules.dotted:
                yield at(node, rules.dotted[path])
                continue
            if path is not None and (name := rules.namesake(path)):
                yield at(node, name, indirect=True)
                continue
            escape = _escape(path) if path is not None else (
                _BUILTIN_ESCAPES.get(node.id) if isinstance(node, ast.Name) else None)
            if escape is not None:
                yield at(node, escape, indirect=True)
                continue
            if isinstance(node, ast.Call) and (module := self._imported_module(node)):
                requested = _const_str(node.args[0]) or module
                for name in rules.held_by(requested) or rules.held_by(module):
                    yield at(node, name, indirect=True)
                continue
            method = self._method_name(node)
            if method in rules.methods:
                yield at(node, rules.methods[method])

    def _method_name(self, node: ast.AST) -> str | None:
        """The attribute a node reads on any receiver: ``x.stride``, ``getattr(x, "stride")``."""
        if isinstance(node, ast.Attribute):
            return node.attr
        if isinstance(node, ast.Call):
            return self._getattr_name(node)
        return None
