"""Values, calls and counterexamples as plain text, for the reports, the terminal and
the exports.

A failing property's record holds described values (``grader.contract.describe``:
tensors with their dtype, shape, stride and values, containers, modules), the
calls that failed and a diff. This module turns them into words and lines: one
line per value, a tensor's elements laid out as torch prints them (with the
differing ones marked), the calls, what was returned, expected and got, and the
whole problem (message, counterexample, the student's traceback and output).
Plain strings only, as in ``grader.reports.present``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from grader.core.i18n import N_, Translator
from grader.core.outcomes import TIMED_OUT
from grader.core.results_json import message_text
from grader.reports.present import captured_output, label, message, split_traceback, traceback_text, words


def is_tensor(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") == "tensor"


def scalar(x: Any) -> str:
    """A tensor element as torch prints it: ``1.`` for a whole float, ``True`` for a bool."""
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, float):
        if not math.isfinite(x):
            return repr(x)
        if x.is_integer() and abs(x) < 1e16:
            return f"{x:.0f}."
        return f"{x:.6g}"
    return str(x)


def tensor_summary(tensor: dict[str, Any], t: Translator | None = None) -> str:
    """``<int64 tensor of shape (2, 3)>``: how a tensor argument is named in a call."""
    return words(t).gettext("<{dtype} tensor of shape {shape}>", dtype=tensor.get("dtype", "?"),
                            shape=tuple(tensor.get("shape") or ()))


def value_cells(values: Any, shape: list[int] | None, marked: set[tuple[int, ...]] | None = None
                ) -> Iterator[tuple[str, bool]]:
    """A tensor's ``values`` (nested lists, ``"..."`` where elided) as text pieces,
    laid out like ``torch`` prints them; each piece says whether it is an element to
    highlight (its index is in ``marked``)."""
    if not isinstance(values, list):
        yield scalar(values), bool(marked and () in marked)
        return
    width = max((len(scalar(v)) for v in _leaves(values)), default=1)
    yield from _cells(values, (), 0, width, marked or set())


def _leaves(values: Any) -> Iterator[Any]:
    if isinstance(values, list):
        for v in values:
            yield from _leaves(v)
    elif values != "...":
        yield values


def _cells(values: list[Any], index: tuple[int, ...], depth: int, width: int,
           marked: set[tuple[int, ...]]) -> Iterator[tuple[str, bool]]:
    yield "[", False
    nested = any(isinstance(v, list) for v in values)
    gap = ",\n" + "\n" * (_depth(values) - 2 if nested else 0) + " " * (depth + 1)
    position: int | None = 0
    for k, v in enumerate(values):
        if k:
            yield (gap if nested else ", "), False
        if v == "...":
            yield "...", False
            position = None  # indices after an elision are unknown: mark nothing more
            continue
        here = (*index, position) if position is not None else None
        if isinstance(v, list):
            yield from _cells(v, here or (-1,), depth + 1, width,
                              marked if here is not None else set())
        else:
            text = scalar(v)
            if len(text) < width:
                yield " " * (width - len(text)), False  # padding stays outside a highlight
            yield text, here is not None and here in marked
        if position is not None:
            position += 1
    yield "]", False


def _depth(values: Any) -> int:
    if not isinstance(values, list):
        return 0
    return 1 + max((_depth(v) for v in values), default=0)


def values_text(t: dict[str, Any]) -> str:
    """A described tensor's values as plain text."""
    if isinstance(t.get("values"), str) and t["values"] != "...":
        return t["values"]  # complex or sparse: described by repr
    return "".join(text for text, _ in value_cells(t.get("values"), t.get("shape")))


def marked_indices(test: Mapping[str, Any]) -> set[tuple[int, ...]]:
    """The first differing indices of a values diff, to highlight in got and expected."""
    diff = (test.get("counterexample") or {}).get("diff") or {}
    return {tuple(i) for i in diff.get("first_indices") or []}


def value_text(value: Any, t: Translator | None = None) -> str:
    """Any described value (``grader.contract.describe``) as one line of Python-like text
    (a tensor named in ``t``'s words)."""
    if is_tensor(value):
        return tensor_summary(value, t)
    if isinstance(value, dict):
        kind = value.get("type")
        if isinstance(value.get("items"), list):  # a list, a tuple, or a subclass (torch.Size)
            items = [value_text(v, t) for v in value["items"]]
            if value.get("omitted"):
                items.append(words(t).gettext("... {n} more", n=value["omitted"]))
            inner = ", ".join(items) + ("," if kind == "tuple" and len(items) == 1 else "")
            if kind == "tuple":
                return f"({inner})"
            return f"[{inner}]" if kind == "list" else f"{'torch.' if kind == 'Size' else ''}{kind}([{inner}])"
        if kind == "dict":
            return "{" + ", ".join(f"{k!r}: {value_text(v, t)}"
                                   for k, v in value.get("items", {}).items()) + "}"
        if kind == "module":
            return value.get("repr", "module")
        return value.get("repr", str(value))
    return repr(value)


SMALL_VALUES = 8  # a tensor with at most this many elements is written out in full in one line


def answer_text(value: Any, t: Translator | None = None) -> str:
    """A described value as one line for people, small tensors with their values:
    ``<float32 tensor of shape (2,)> [0., 1.]``; never JSON."""
    if is_tensor(value):
        size = 1
        for d in value.get("shape") or []:
            size *= d
        values = value.get("values")
        if size <= SMALL_VALUES and not value.get("elided") and values is not None:
            return f"{tensor_summary(value, t)} {' '.join(values_text(value).split())}"
        return tensor_summary(value, t)
    return value_text(value, t)


def call_text(call: dict[str, Any], t: Translator | None = None) -> str:
    """``one_hot(<int64 tensor of shape (2,)>, 2)`` (a tensor named in ``t``'s words)."""
    args = [value_text(a, t) for a in call.get("args", [])]
    args += [f"{k}={value_text(v, t)}" for k, v in call.get("kwargs", {}).items()]
    return f"{call.get('function', '?')}({', '.join(args)})"


def tensors_in(value: Any, name: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(name, tensor) for every tensor inside a described value, e.g. ``result[0]``."""
    if is_tensor(value):
        yield name, value
    elif isinstance(value, dict) and value.get("type") in ("list", "tuple"):
        for i, v in enumerate(value.get("items", [])):
            yield from tensors_in(v, f"{name}[{i}]")
    elif isinstance(value, dict) and value.get("type") == "dict":
        for k, v in value.get("items", {}).items():
            yield from tensors_in(v, f"{name}[{k!r}]")


def call_tensors(call: dict[str, Any], t: Translator | None = None) -> list[tuple[str, dict[str, Any]]]:
    """The tensors a call was given, named ``argument 1``, ``num_classes=``, ...."""
    t = words(t)
    found: list[tuple[str, dict[str, Any]]] = []
    for i, a in enumerate(call.get("args", [])):
        found += tensors_in(a, t.gettext("argument {n}", n=i + 1))
    for k, v in call.get("kwargs", {}).items():
        found += tensors_in(v, f"{k}=")
    return found


def diff_lines(diff: dict[str, Any], got: Any = None, expected: Any = None,
               t: Translator | None = None) -> list[str]:
    """What differs, in a few short lines (the tensor-aware diff)."""
    t = words(t)
    kind = diff.get("kind")
    if not kind:
        return []
    if kind == "values":
        n, total = diff.get("mismatched"), diff.get("total")
        lines = [t.gettext("{n} of {total} element differs", n=n, total=total) if total == 1
                 else t.gettext("{n} of {total} elements differ", n=n, total=total)]
        if diff.get("max_abs_error") is not None:
            lines.append(t.gettext("max absolute error {error}", error=f"{diff['max_abs_error']:.6g}"))
        if diff.get("max_rel_error") is not None:
            lines.append(t.gettext("max relative error {error}", error=f"{diff['max_rel_error']:.6g}"))
        if diff.get("first_indices"):
            shown = ", ".join(str(tuple(i)) for i in diff["first_indices"])
            lines.append(t.gettext("first differing indices: {indices}", indices=shown))
        return lines
    if kind in ("dtype", "shape", "device") and is_tensor(got) and is_tensor(expected):
        g, e = got.get(kind), expected.get(kind)
        if kind == "shape":
            g, e = tuple(g or ()), tuple(e or ())
        return [t.gettext("{kind} differs: got {got}, expected {expected}", kind=_kind(kind, t), got=g, expected=e)]
    if kind == "type":
        return [t.gettext("type differs: got {got}, expected {expected}", got=value_text(got, t),
                          expected=value_text(expected, t))]
    if kind == "length":
        return [t.gettext("number of items differs")]
    return [t.gettext("{kind} differs", kind=_kind(kind, t))]


# What a mismatch is about, in a learner's words (``dtype`` is torch's own name for it).
DIFF_KINDS = {"shape": N_("shape"), "device": N_("device"), "value": N_("value")}


def _kind(kind: str, t: Translator) -> str:
    return t.gettext(DIFF_KINDS[kind]) if kind in DIFF_KINDS else kind


def differing_field(test: Mapping[str, Any]) -> str:
    """``dtype``/``shape``/``device`` when that is what a mismatch is about, else ``""``."""
    kind = ((test.get("counterexample") or {}).get("diff") or {}).get("kind", "")
    return kind if kind in ("dtype", "shape", "device") else ""


def tensor_block(name: str, tensor: dict[str, Any], indent: str = "  ", t: Translator | None = None) -> list[str]:
    """A tensor as a few plain-text lines: name, shape/dtype/stride, values."""
    t = words(t)
    stride = tensor.get("stride")
    head = (t.gettext("shape {shape}, dtype {dtype}", shape=tuple(tensor.get("shape") or ()), dtype=tensor.get("dtype"))
            + (t.gettext(", stride {stride}", stride=tuple(stride)) if stride is not None else "")
            + (t.gettext(", device {device}", device=tensor["device"])
               if tensor.get("device") not in (None, "cpu") else "")
            + (t.gettext(" (long: middle values elided)") if tensor.get("elided") else ""))
    body = values_text(tensor).splitlines() or [""]
    return [indent + t.gettext("{name}: {details}", name=name, details=head)] + [indent + "  " + line for line in body]


def call_ending(call: Mapping[str, Any], t: Translator | None = None,
                test: Mapping[str, Any] | None = None) -> str | None:
    """How a recorded call ended when it returned nothing: ``raised ValueError: ...`` (the
    student's own words after the label), ``timed out: ...`` (the grader's, in ``t``'s
    language; ``timed out`` alone where it says what ``test``'s message above says already);
    None for a call that returned."""
    t = words(t)
    if "raised" in call:
        return t.gettext("raised {exception}", exception=call["raised"])
    stopped = call.get("timed_out")
    if isinstance(stopped, dict):
        said = str(stopped.get("message") or "")
        if test is not None and said and str(test.get("message") or "").startswith(said):
            return label(TIMED_OUT, t)
        return t.gettext("timed out: {why}", why=message_text(dict(stopped), t))
    return None


def counterexample_text(test: Mapping[str, Any], t: Translator | None = None) -> str:
    """A failing property's counterexample as plain text (terminal, Gradescope, JUnit), in
    ``t``'s words (the values as they are)."""
    t = words(t)
    cx = test.get("counterexample") or {}
    lines: list[str] = []
    for call in cx.get("calls", []):
        lines.append(t.gettext("call: {call}", call=call_text(call, t)))
        for name, tensor in call_tensors(call, t):
            lines += tensor_block(name, tensor, t=t)
        ending = call_ending(call, t, test)
        if ending is not None:
            lines.append("  " + ending)
        elif "result" in call:
            lines += _returned_lines(call["result"], cx.get("got"), t)
    for which, caption in (("expected", t.gettext("expected")), ("got", t.gettext("got"))):
        if which in cx:
            value = cx[which]
            blocks = list(tensors_in(value, caption))
            lines += [line for name, tensor in blocks for line in tensor_block(name, tensor, "", t)] \
                if blocks else [t.gettext("{name}: {value}", name=caption, value=value_text(value, t))]
    diff = diff_lines(cx.get("diff") or {}, cx.get("got"), cx.get("expected"), t)
    if diff:
        lines.append(t.gettext("diff: {lines}", lines=t.gettext("; ").join(diff)))
    if cx.get("example") and not cx.get("calls"):
        lines.append(cx["example"])
    return "\n".join(lines)


def _returned_lines(result: Any, got: Any, t: Translator) -> list[str]:
    if result == got and got is not None:
        return ["  " + t.gettext("returned {value} (shown below as got)", value=value_text(result, t))]
    returned = t.gettext("returned")
    if is_tensor(result):
        return tensor_block(returned, result, t=t)
    lines = ["  " + t.gettext("returned {value}", value=value_text(result, t))]
    for name, tensor in tensors_in(result, returned):
        lines += tensor_block(name, tensor, "    ", t)
    return lines


def problem_text(test: Mapping[str, Any], t: Translator | None = None) -> str:
    """Message, counterexample and the student's traceback of a property, as plain text,
    in ``t``'s words (the student's own text as written)."""
    t = words(t)
    text, tb = split_traceback(message(test, t))
    parts = [text, counterexample_text(test, t), traceback_text(tb, t)]
    for stream, text in captured_output(test):
        parts.append(t.gettext("your code printed ({stream}):", stream=stream) + "\n" + text.rstrip())
    return "\n".join(p for p in parts if p)
