# mypy: disable-error-code="misc"
# (lambdas that bind their loop values as defaults: mypy cannot infer their type)
"""First-order mutants of a drill's reference: one small change each, the mistakes a
property must catch.

Each operator walks the reference's functions (never the module level, never a
docstring) and yields every place it applies. Besides the classic operators
(arithmetic, comparisons, boolean connectives, constants) there are the mistakes
torch learners make: a ``dim`` or ``keepdim`` changed, a ``detach``, ``clone`` or
``contiguous`` dropped, a ``no_grad`` block or a ``finally`` lost, a call statement
(``zero_grad()``, ``remove()``, ``step()``) deleted, an in-place method swapped with
its out-of-place twin, a slice bound off by one, a default changed.

A mutant's id is ``operator@line:column#k``: stable while the reference's text is,
so a drill's audit file can accept one by id.
"""

from __future__ import annotations

import ast
import copy
import difflib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from grader.core.i18n import Message

_ARITH: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div, ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult, ast.MatMult: ast.Mult,
}
_COMPARE: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In,
}
_DROPPED_METHODS = ("detach", "clone", "contiguous", "copy", "float", "double", "long", "int", "bool", "item",
                    "tolist", "requires_grad_", "cpu")
_GRAD_CONTEXTS = ("no_grad", "enable_grad", "inference_mode", "set_grad_enabled", "fork_rng")
_DIM_KEYWORDS = ("dim", "dims", "axis", "start_dim", "end_dim")
# torch.Tensor methods with an in-place twin (``add`` and ``add_``), read from torch once
_INPLACE_PAIRS: frozenset[str] | None = None


def _inplace_names() -> frozenset[str]:
    global _INPLACE_PAIRS
    if _INPLACE_PAIRS is None:
        import torch

        names = set(dir(torch.Tensor))
        _INPLACE_PAIRS = frozenset(n for n in names if n.endswith("_") and not n.startswith("_")
                                   and n[:-1] in names)
    return _INPLACE_PAIRS


@dataclass(frozen=True)
class Mutant:
    """One changed copy of the reference."""

    id: str           # operator@line:column#k
    operator: str     # which kind of mistake
    line: int
    description: str  # what changed, in English (what an acceptance names)
    source: str       # the whole mutated file
    diff: str         # a unified diff against the reference
    message: Message | None = None  # the description as a message, for another language


@dataclass
class _Site:
    operator: str
    node: ast.AST
    description: Message | str  # a message for words, plain text for code (``Add -> Sub``, ``1 -> 2``)
    apply: Callable[[Any], Any]  # the mutated node, or statements in its place


def _sites(tree: ast.Module) -> Iterator[_Site]:
    """Every mutation site inside the module's functions (methods included)."""
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        yield from _default_sites(func)
        body = func.body[1:] if ast.get_docstring(func) is not None else func.body
        for stmt in body:
            for node in ast.walk(stmt):
                yield from _node_sites(node)


def _default_sites(func: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[_Site]:
    args = func.args
    for default in [*args.defaults, *[d for d in args.kw_defaults if d is not None]]:
        for replacement, words in _constant_changes(default):
            yield _Site("default", default,
                        Message("a default of {function}(): {change}", {"function": func.name, "change": words}),
                        lambda _n, r=replacement: r)


def _constant_changes(node: Any) -> list[tuple[ast.AST, str]]:
    if not isinstance(node, ast.Constant):
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            value = node.operand.value
            if isinstance(value, int | float) and not isinstance(value, bool):
                return [(ast.Constant(-value + 1), f"-{value} -> {-value + 1}"),
                        (ast.Constant(value), f"-{value} -> {value}")]
        return []
    value = node.value
    if isinstance(value, bool):
        return [(ast.Constant(not value), f"{value} -> {not value}")]
    if isinstance(value, int):
        return [(ast.Constant(value + 1), f"{value} -> {value + 1}"), (ast.Constant(value - 1), f"{value} -> {value - 1}")]
    if isinstance(value, float):
        changed = value * 2 if value else 1.0
        return [(ast.Constant(changed), f"{value!r} -> {changed!r}")]
    return []


def _call_name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _node_sites(node: Any) -> Iterator[_Site]:
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        new = _ARITH[type(node.op)]
        yield _Site("arithmetic", node, f"{type(node.op).__name__} -> {new.__name__}",
                    lambda n, new=new: ast.BinOp(n.left, new(), n.right))
    elif isinstance(node, ast.AugAssign) and type(node.op) in _ARITH:
        new = _ARITH[type(node.op)]
        yield _Site("arithmetic", node, f"{type(node.op).__name__}= -> {new.__name__}=",
                    lambda n, new=new: ast.AugAssign(n.target, new(), n.value))
        yield _Site("inplace", node, Message("an augmented assignment (in place) -> a new value"),
                    lambda n: ast.Assign([n.target], ast.BinOp(_load(n.target), n.op, n.value)))
    elif isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):  # each operator of a chain (0 <= rank < world) in turn
            if type(op) in _COMPARE:
                new_cmp = _COMPARE[type(op)]
                yield _Site("comparison", node, f"{type(op).__name__} -> {new_cmp.__name__}",
                            lambda n, i=i, new=new_cmp: ast.Compare(n.left, [*n.ops[:i], new(), *n.ops[i + 1:]],
                                                                    n.comparators))
    elif isinstance(node, ast.BoolOp):
        other = ast.Or if isinstance(node.op, ast.And) else ast.And
        yield _Site("boolean", node, f"{type(node.op).__name__} -> {other.__name__}",
                    lambda n, other=other: ast.BoolOp(other(), n.values))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield _Site("boolean", node, Message("a `not` dropped"), lambda n: n.operand)
    elif isinstance(node, ast.Constant) and not isinstance(node.value, str):
        for replacement, words in _constant_changes(node):
            yield _Site("constant", node, words, lambda _n, r=replacement: r)
    elif isinstance(node, ast.Slice):
        for part in ("lower", "upper"):
            if getattr(node, part) is not None:
                bound = Message("a slice's lower bound + 1") if part == "lower" else Message("a slice's upper bound + 1")
                yield _Site("bound", node, bound,
                            lambda n, part=part: _with(n, part, ast.BinOp(getattr(n, part), ast.Add(), ast.Constant(1))))
    elif isinstance(node, ast.Call):
        yield from _call_sites(node)
    elif isinstance(node, ast.With):
        names = [_call_name(item.context_expr) for item in node.items if isinstance(item.context_expr, ast.Call)]
        if any(n in _GRAD_CONTEXTS for n in names):
            yield _Site("context", node, Message("`with {context}()` dropped (its body kept)", {"context": "/".join(names)}),
                        lambda n: n.body)
    elif isinstance(node, ast.Try) and node.finalbody:
        yield _Site("finally", node, Message("the finally block dropped (the try body kept)"),
                    lambda n: [*n.body] if not n.handlers else ast.Try(n.body, n.handlers, n.orelse, []))
        yield _Site("finally", node, Message("the finally block run only when the try body succeeds"),
                    lambda n: [*n.body, *n.finalbody] if not n.handlers
                    else [ast.Try(n.body, n.handlers, n.orelse, []), *n.finalbody])
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        yield _Site("statement", node, Message("the call `{name}(...)` deleted", {"name": _call_name(node.value)}),
                    lambda _n: ast.Pass())


def _call_sites(call: Any) -> Iterator[_Site]:
    name = _call_name(call)
    f = call.func
    if isinstance(f, ast.Attribute) and name in _DROPPED_METHODS and not call.args and not call.keywords:
        yield _Site("dropped call", call, Message("`.{name}()` dropped", {"name": name}), lambda n: n.func.value)
    if isinstance(f, ast.Attribute) and name in _inplace_names():
        yield _Site("inplace", call, Message("`.{name}` -> `.{other}` (out of place)", {"name": name, "other": name[:-1]}),
                    lambda n: _renamed(n, name[:-1]))
    elif isinstance(f, ast.Attribute) and f"{name}_" in _inplace_names():
        yield _Site("inplace", call, Message("`.{name}` -> `.{other}` (in place)", {"name": name, "other": f"{name}_"}),
                    lambda n: _renamed(n, f"{name}_"))
    for i, keyword in enumerate(call.keywords):
        value = keyword.value
        if keyword.arg in _DIM_KEYWORDS and isinstance(value, ast.Constant | ast.UnaryOp):
            for replacement, words in _constant_changes(value):
                yield _Site("dim", call, f"{name}({keyword.arg}=...): {words}",
                            lambda n, i=i, r=replacement: _with_keyword(n, i, r))
        elif keyword.arg == "keepdim" and isinstance(value, ast.Constant):
            yield _Site("dim", call, f"{name}(keepdim={value.value!r} -> {not value.value!r})",
                        lambda n, i=i, v=value.value: _with_keyword(n, i, ast.Constant(not v)))
    if name in ("range",) and call.args:
        last = len(call.args) - 1 if len(call.args) < 3 else 1
        yield _Site("bound", call, Message("range(...)'s end + 1"),
                    lambda n, k=last: _with_arg(n, k, ast.BinOp(n.args[k], ast.Add(), ast.Constant(1))))
        yield _Site("bound", call, Message("range(...)'s end - 1"),
                    lambda n, k=last: _with_arg(n, k, ast.BinOp(n.args[k], ast.Sub(), ast.Constant(1))))


def _load(target: ast.expr) -> ast.expr:
    node = copy.deepcopy(target)
    for sub in ast.walk(node):
        if hasattr(sub, "ctx"):
            sub.ctx = ast.Load()
    return node


def _with(node: ast.AST, field: str, value: ast.AST) -> ast.AST:
    new = copy.copy(node)
    setattr(new, field, value)
    return new


def _renamed(call: ast.Call, attr: str) -> ast.Call:
    f = call.func
    assert isinstance(f, ast.Attribute)
    return ast.Call(ast.Attribute(f.value, attr, ast.Load()), call.args, call.keywords)


def _with_keyword(call: ast.Call, i: int, value: ast.expr) -> ast.Call:
    keywords = list(call.keywords)
    keywords[i] = ast.keyword(keywords[i].arg, value)
    return ast.Call(call.func, call.args, keywords)


def _with_arg(call: ast.Call, i: int, value: ast.expr) -> ast.Call:
    args = list(call.args)
    args[i] = value
    return ast.Call(call.func, args, call.keywords)


class _Replace(ast.NodeTransformer):
    """Replace the node at ``position`` in the visiting order of a fresh parse (the
    same order as ``_visit_order`` of the first) with ``apply(node)``."""

    def __init__(self, position: int, apply: Callable[[Any], Any]):
        self.position, self.apply, self.seen = position, apply, 0

    def visit(self, node: ast.AST) -> Any:
        here, self.seen = self.seen, self.seen + 1
        if here == self.position:
            return self.apply(node)
        return super().visit(node)


def mutants(source: str, filename: str = "reference.py") -> list[Mutant]:
    """Every first-order mutant of ``source`` that still compiles and differs from it."""
    tree = ast.parse(source)
    base = ast.unparse(tree)
    found: list[Mutant] = []
    seen_sources: set[str] = set()
    counts: dict[tuple[str, int, int], int] = {}
    position = {id(node): i for i, node in enumerate(_visit_order(tree))}
    for site in _sites(tree):
        line, col = getattr(site.node, "lineno", -1), getattr(site.node, "col_offset", -1)
        # several sites of one kind can share a position (a chain of calls): number them
        k = counts.get((site.operator, line, col), 0)
        counts[site.operator, line, col] = k + 1
        mutated = _Replace(position[id(site.node)], site.apply).visit(ast.parse(source))
        ast.fix_missing_locations(mutated)
        try:
            text = ast.unparse(mutated)
            compile(text, filename, "exec")
        except (SyntaxError, ValueError, TypeError):
            continue
        if text == base or text in seen_sources:
            continue
        seen_sources.add(text)
        diff = "".join(difflib.unified_diff((base + "\n").splitlines(keepends=True),
                                            (text + "\n").splitlines(keepends=True), "reference", "mutant", n=1))
        found.append(Mutant(f"{site.operator}@{line}:{col}#{k}", site.operator, line,
                            str(site.description), text + "\n", diff,
                            site.description if isinstance(site.description, Message) else None))
    return found


def _visit_order(node: ast.AST) -> Iterator[ast.AST]:
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _visit_order(child)
