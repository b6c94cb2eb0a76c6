"""Every default parameter is exercised: for each parameter with a default in a drill's
stub, some property calls the function without that argument and compares the answer
with the oracle.

How it is proved, for every drill at once: a *poisoned* submission is the reference with
one default changed (``dilation=1`` made ``dilation=2``, ``mask=None`` made a causal mask):
a call that passes the argument gets the reference's answer, a call that leaves it out
gets the answer for the wrong value. Graded on all the drill's properties, it must lose
points. It loses none exactly when no property leaves that argument out, or when those
that do never compare what comes back, so a student whose default is wrong (or who never
wrote one) would keep every point.

The wrong value of a default: its opposite for a bool, one more for an int, 0.25 for a
0.0 and a thousand times a float otherwise; ``WRONG`` gives the others (``None``, strings,
callables) as Python source over ``a``, the call's bound arguments. A new default in a
stub without a rule here fails ``test_every_default_has_a_wrong_value``.

The poisoned submissions are graded in rounds, like the mutant corpus: the k-th default
of every drill together, each drill on its own properties (drills are graded
independently, so poisons cannot mask each other), in-process, without shrinking.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from grader.core.results_json import Results
from grader.core.syllabus import exercise_tests
from grader.tests.grading import REPO, exercise, grade_properties
from grader.tests.shared import shared

# Wrong values that no rule of thumb gives: Python source over ``a`` (the bound arguments
# of the call, by name) and ``torch``.
# (Adds 1 after the sum: doubling would cancel out of every mean, sum / count.)
SKEWED_ALL_REDUCE = "lambda t, *args, **kwargs: (torch.distributed.all_reduce(t, *args, **kwargs), t.add_(1))[0]"
WRONG: dict[tuple[str, str, str], str] = {
    ("attention/attention", "attention", "mask"):
        "torch.ones(a['query'].shape[-2], a['key'].shape[-2], dtype=torch.bool).tril()",
    ("distributed/grad_sync", "average_gradients", "all_reduce"): SKEWED_ALL_REDUCE,
    ("distributed/sync_bn", "sync_batch_stats", "all_reduce"): SKEWED_ALL_REDUCE,
    ("distributed/sync_bn", "sync_batch_norm", "all_reduce"): SKEWED_ALL_REDUCE,
    ("distributed/gather_eval", "all_gather_uneven", "all_reduce"): SKEWED_ALL_REDUCE,
    ("distributed/gather_eval", "gather_predictions", "all_reduce"): SKEWED_ALL_REDUCE,
    ("losses/cross_entropy", "cross_entropy", "weight"):
        "torch.arange(1, a['logits'].shape[1 if a['logits'].dim() > 1 else 0] + 1, "
        "dtype=a['logits'].dtype, device=a['logits'].device)",
    ("losses/cross_entropy", "cross_entropy", "ignore_index"): "0",
    ("losses/cross_entropy", "cross_entropy", "reduction"): "'sum'",
    ("nn/batch_norm_stats", "batch_norm_train", "weight"):
        "torch.full((a['x'].shape[1],), 2.0, dtype=a['x'].dtype, device=a['x'].device)",
    ("nn/batch_norm_stats", "batch_norm_train", "bias"):
        "torch.full((a['x'].shape[1],), 0.5, dtype=a['x'].dtype, device=a['x'].device)",
    ("nn/batch_norm_stats", "batch_norm_eval", "weight"):
        "torch.full((a['x'].shape[1],), 2.0, dtype=a['x'].dtype, device=a['x'].device)",
    ("nn/batch_norm_stats", "batch_norm_eval", "bias"):
        "torch.full((a['x'].shape[1],), 0.5, dtype=a['x'].dtype, device=a['x'].device)",
    ("nn/conv2d", "conv2d", "bias"):
        "torch.ones(a['weight'].shape[0], dtype=a['x'].dtype, device=a['x'].device)",
    ("nn/conv_transpose", "conv_transpose2d", "bias"):
        "torch.ones(a['weight'].shape[1], dtype=a['x'].dtype, device=a['x'].device)",
    ("nn/layer_norm", "layer_norm", "weight"):
        "torch.full(tuple(a['x'].shape[a['x'].dim() - len(torch.Size([a['normalized_shape']]) "
        "if isinstance(a['normalized_shape'], int) else tuple(a['normalized_shape'])):]), 2.0, "
        "dtype=a['x'].dtype, device=a['x'].device)",
    ("nn/layer_norm", "layer_norm", "bias"):
        "torch.full(tuple(a['x'].shape[a['x'].dim() - len(torch.Size([a['normalized_shape']]) "
        "if isinstance(a['normalized_shape'], int) else tuple(a['normalized_shape'])):]), 0.5, "
        "dtype=a['x'].dtype, device=a['x'].device)",
    ("nn/pool2d", "pool2d", "stride"): "1",
    ("nn/pool2d", "pool2d", "mode"): "'avg'",
    ("speed/grad_scaler", "scaled_step", "max_norm"): "0.01",  # None: no clipping; a tight clip changes every step
    ("tensors/padding", "pad_sequences", "padding_value"): "7.0",  # 0.25 would be 0 for int64 sequences
    ("tensors/one_hot", "one_hot", "num_classes"): "int(a['labels'].max()) + 2 if a['labels'].numel() else 3",
    ("tensors/repeat_interleave", "repeat_interleave", "dim"): "0",
}


def _default_value(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        return ast.unparse(node)  # a name: torch.distributed.all_reduce


def stub_defaults() -> dict[str, list[tuple[str, str, Any]]]:
    """Drill id -> (function, parameter, default) for every parameter with a default in
    the drill's stub, in signature order."""
    found: dict[str, list[tuple[str, str, Any]]] = {}
    for drill in sorted(exercise_tests(REPO)):
        tree = ast.parse((REPO / "exercises" / f"{drill}.py").read_text())
        for fn in tree.body:
            if not isinstance(fn, ast.FunctionDef) or fn.name.startswith("_"):
                continue
            positional = fn.args.posonlyargs + fn.args.args
            pairs = list(zip(positional[len(positional) - len(fn.args.defaults):], fn.args.defaults))
            pairs += [(arg, d) for arg, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is not None]
            for arg, node in pairs:
                found.setdefault(drill, []).append((fn.name, arg.arg, _default_value(node)))
    return found


def wrong_source(drill: str, fn: str, param: str, default: Any) -> str | None:
    """Python source of a wrong value for the default, or None when no rule gives one."""
    if (drill, fn, param) in WRONG:
        return WRONG[drill, fn, param]
    if type(default) is bool:
        return repr(not default)
    if type(default) is int:
        return repr(default + 1)
    if type(default) is float:
        return repr(0.25 if default == 0 else default * 1000)
    return None


DEFAULTS = stub_defaults()
CASES = [(drill, k, fn, param, default) for drill, params in DEFAULTS.items()
         for k, (fn, param, default) in enumerate(params)]
ROUNDS = max((len(params) for params in DEFAULTS.values()), default=0)

POISONED = '''"""The reference with {fn}'s default {param}={default} made wrong (generated by
grader/tests/test_defaults.py): a call that leaves {param} out gets the answer for
{param}={wrong}."""

import functools
import importlib.util
import inspect

import torch

_spec = importlib.util.spec_from_file_location("_defaults_reference_{index}", {path!r})
_reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_reference)
globals().update({{k: v for k, v in vars(_reference).items() if not k.startswith("__")}})


def _poison(fn, param, wrong):
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            a = signature.bind(*args, **kwargs).arguments
        except TypeError:
            return fn(*args, **kwargs)
        if param not in a:
            kwargs[param] = wrong(a)
        return fn(*args, **kwargs)

    return call


{fn} = _poison(_reference.{fn}, {param!r}, lambda a: {wrong})
'''


def poisoned_source(drill: str, fn: str, param: str, default: Any, index: int) -> str:
    wrong = wrong_source(drill, fn, param, default)
    assert wrong is not None, f"{drill}: no wrong value for {fn}'s {param}={default!r}"
    return POISONED.format(fn=fn, param=param, default=default, wrong=wrong, index=index,
                           path=str(REPO / "reference" / f"{drill}.py"))


def properties_of(drill: str) -> list[str]:
    source = exercise_tests(REPO)[drill].read_text()
    return [node.name for node in ast.parse(source).body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")]


def graded_round(k: int, factory: pytest.TempPathFactory) -> Results:
    """The k-th default of every drill that has one, poisoned, graded on all the drill's
    properties (in-process, no shrinking: only whether points are lost counts), with
    ``check``'s quick profile: a default exercised within 25 examples is exercised
    within the official 100."""
    def make(folder: Path) -> Results:
        properties = {}
        for i, (drill, j, fn, param, default) in enumerate(CASES):
            if j == k:
                target = folder / "submission" / f"{drill}.py"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(poisoned_source(drill, fn, param, default, i))
                properties[drill] = properties_of(drill)
        return grade_properties(folder / "submission", folder / "out", properties,
                                "--no-shrink", "--isolation", "none", "--hypothesis-profile", "torchdrill-quick")

    return shared(factory, f"defaults-round{k}", make)


def test_every_default_has_a_wrong_value():
    missing = [f"{drill}: {fn}({param}={default!r})" for drill, _, fn, param, default in CASES
               if wrong_source(drill, fn, param, default) is None]
    assert not missing, f"defaults with no wrong value to poison them with (add them to WRONG): {missing}"
    known = {(drill, fn, param) for drill, _, fn, param, _ in CASES}
    stale = sorted(set(WRONG) - known)
    assert not stale, f"WRONG names defaults no stub has: {stale}"


def test_a_poisoned_default_changes_the_answer_only_where_it_is_left_out(tmp_path):
    """The poison itself: conv_output_size(7, 3) is 5 in the reference; with dilation=1
    poisoned to 2 it is 3, unless the call says dilation=1."""
    import importlib.util

    [(i, default)] = [(i, default) for i, (drill, _, fn, param, default) in enumerate(CASES)
                      if (drill, fn, param) == ("nn/conv_shapes", "conv_output_size", "dilation")]
    path = tmp_path / "conv_shapes.py"
    path.write_text(poisoned_source("nn/conv_shapes", "conv_output_size", "dilation", default, i))
    spec = importlib.util.spec_from_file_location("poisoned_conv_shapes", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.conv_output_size(7, 3) == 3
    assert module.conv_output_size(7, 3, dilation=1) == module.conv_output_size(7, kernel=3, dilation=1) == 5
    assert module.conv_transpose_output_size(4, 3, stride=2, padding=1) == 7  # untouched


@pytest.mark.parametrize("drill,k,fn,param,default", [
    pytest.param(*case, id=f"{case[0]}/{case[2]}/{re.sub(r'[^A-Za-z0-9_]', '_', case[3])}") for case in CASES])
def test_every_default_is_exercised(drill, k, fn, param, default, tmp_path_factory):
    ex = exercise(graded_round(k, tmp_path_factory), drill)
    wrong = wrong_source(drill, fn, param, default)
    assert ex["score"] < ex["max_score"], (
        f"{drill}: {fn}'s default {param}={default!r}, poisoned to {param}={wrong}, costs no "
        f"points: no property calls {fn} without {param} and compares the answer with the "
        "oracle. Leave it out of an ordinary call (half the examples, say) and compare.")
