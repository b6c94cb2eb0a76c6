"""Failures are reported once per difference, and a property says which defect stopped it.

Issue 38: bob's one bug (float32 zeros in one_hot) read as "9 different reasons, each a
mistake of its own", one ``/ d_k`` bug in attention as 6, and properties named "labels
are left unchanged" or "masked keys weigh 0" failed for the dtype or the scale. Here:
the grouping key (``grader.core.differences.mistake``) on records built from the real
comparisons, the "stopped by another defect" wording of ``tests/properties.py``'s
anchors, the scale attention's tests measure, and the two cases end to end on the
mutant corpus' shared gradings.
"""

from __future__ import annotations

import ast
import importlib
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from grader.contract import expect
from grader.contract.expect import Mismatch, assert_same, assert_same_dtype
from grader.core import differences, engine_phrases
from grader.core.i18n import Lang, Message, translator
from grader.core.outcomes import StudentError, worded
from grader.reports import present
from grader.tests.grading import exercise
from grader.tests.test_mutants import CASES, graded_round
from tests.numerics import overflowed
from tests.properties import anchored, assert_ordinary, harder_than

ONE_HOT_SPEC = torch.tensor([[0, 0, 1], [1, 0, 0]])


def failure(check: Callable[[], object]) -> Exception:
    try:
        check()
    except (AssertionError, StudentError) as exc:
        return exc
    raise AssertionError("the check passed")


def record(name: str, exc: BaseException, function: str = "one_hot", weight: float = 1) -> dict[str, Any]:
    """A failed property's record as a grading writes it (message, its kept id, the
    counterexample's last call and the mismatch's got/expected/diff)."""
    kept = worded(exc)
    cx: dict[str, Any] = {"calls": [{"function": function, "args": [], "kwargs": {}}]}
    if isinstance(exc, Mismatch):
        cx.update(exc.details)
    return {"name": name, "outcome": "error" if isinstance(exc, StudentError) else "failed", "weight": weight,
            "message": str(exc), "message_id": kept.to_json() if kept else None, "counterexample": cx}


def dtype_mismatch(what: str) -> Exception:
    return failure(lambda: assert_same(ONE_HOT_SPEC.float(), ONE_HOT_SPEC, what=what))


def anchor_failure(what: str) -> Exception:
    """A form check that passed, beside an ordinary comparison that did not."""
    def check() -> None:
        with anchored(lambda: ONE_HOT_SPEC.float(), lambda: ONE_HOT_SPEC, what=what):
            pass
    return failure(check)


def drill(*tests: dict[str, Any]) -> dict[str, Any]:
    return {"id": "tensors/one_hot", "tests": list(tests)}


# ------------------------------------------------------------------ one difference, one reason

def test_one_dtype_mistake_is_one_reason_however_many_properties_show_it():
    """bob's float32 one_hot: the main comparisons, an empty-labels comparison, the dtype
    form check and three properties an anchor stopped show one difference."""
    found = present.reasons(drill(
        record("test_matches_given_classes", dtype_mismatch("result"), weight=3),
        record("test_empty_labels", dtype_mismatch("one_hot of empty labels of shape (0,)")),
        record("test_dtype_is_int64", failure(lambda: assert_same_dtype(
            ONE_HOT_SPEC.float(), ONE_HOT_SPEC, what="one_hot's result (F.one_hot gives torch.int64)"))),
        record("test_bool_labels_raise", anchor_failure("one_hot of valid labels (beside the bool labels)")),
        record("test_labels_are_left_unchanged", failure(lambda: assert_ordinary(
            lambda: ONE_HOT_SPEC.float(), lambda: ONE_HOT_SPEC, what="one_hot of labels of shape (2,)"))),
        record("test_negative_label_raises", anchor_failure("one_hot of valid labels (beside the negative one)")),
    ))
    assert len(found) == 1, [g["reason"] for g in found]
    assert found[0]["reason"] == "result: dtype differs: got torch.float32, expected torch.int64"
    assert found[0]["tests"][0]["name"] == "test_matches_given_classes"
    assert found[0]["weight"] == 8


def test_what_differs_decides_the_reason_and_nothing_else_does():
    values = failure(lambda: assert_same(torch.ones(2), torch.zeros(2), what="output"))
    other_values = failure(lambda: assert_same(torch.ones(3), torch.full((3,), 2.0), what="p_attn"))
    shape = failure(lambda: assert_same(torch.ones(2), torch.ones(3)))
    overflow = failure(lambda: assert_same(torch.tensor([math.nan]), torch.zeros(1), what="output"))
    raised = [StudentError("one_hot", IndexError(f"index {i} is out of bounds"), "") for i in (3, 7)]
    other_raise = StudentError("one_hot", RuntimeError("boom"), "")
    key = differences.mistake
    assert key(record("a", values, "attention")) == key(record("b", other_values, "attention")), \
        "the same function's wrong values, whatever was compared and on which input"
    assert key(record("a", values, "attention")) != key(record("b", values, "padding_mask")), \
        "two functions' wrong values are two reasons"
    assert key(record("a", values)) != key(record("b", shape)), "values and shape are two differences"
    assert key(record("a", values)) != key(record("b", overflow)), "inf or nan is not a wrong finite value"
    assert key(record("a", raised[0])) == key(record("b", raised[1])), "the same exception type, any text"
    assert key(record("a", raised[0])) != key(record("b", other_raise))
    assert key(record("a", dtype_mismatch("x"))) != key(record("b", failure(
        lambda: assert_same(ONE_HOT_SPEC.double(), ONE_HOT_SPEC)))), "float32 and float64 are two dtypes"
    plain = {"name": "t", "outcome": "failed", "message": "the log should be a list\nmore"}
    assert key(plain) == key(dict(plain, name="u")) != key(dict(plain, message="another sentence"))


def test_every_comparison_message_has_a_kind_and_a_stopped_form():
    """A message ``assert_same`` words a difference with may not be left out of the key's
    table, nor out of the stopped forms (read from its source: a device difference
    needs a second device to happen)."""
    ids = {node.value for module in (expect, engine_phrases)
           for node in ast.walk(ast.parse(Path(str(module.__file__)).read_text()))
           if isinstance(node, ast.Constant) and str(node.value).startswith("{what}: ")}
    assert len(ids) == 10
    assert ids == set(differences.STOPPED) == set(differences.KINDS) - {"{function} raised {kind}: {error}"}
    assert worded(StudentError("f", ValueError("x"), "")).id in differences.KINDS  # type: ignore[union-attr]


# ------------------------------------------------------------------ stopped by another defect

def test_a_property_whose_ordinary_answer_is_wrong_says_which_defect_stopped_it():
    exc = anchor_failure("one_hot of valid labels (beside the bool labels)")
    assert isinstance(exc, Mismatch) and exc.details["diff"] == {"kind": "dtype"}, "got/expected/diff kept"
    assert str(exc) == ("stopped by another defect: one_hot of valid labels (beside the bool labels): "
                        "dtype differs: got torch.float32, expected torch.int64")
    kept = worded(exc)
    assert kept is not None and differences.unstopped(kept) == Message(
        "{what}: dtype differs: got {got}, expected {expected}", kept.params)
    zh = translator(Lang.ZH_CN).message(kept)
    assert zh.startswith("受另一处错误牵连：") and "dtype 不同" in zh and "stopped" not in zh

    def wrong_block(anchor, ordinary) -> None:
        with anchor(ordinary, lambda: ONE_HOT_SPEC, what="one_hot of valid labels"):
            assert_same(torch.zeros(1), torch.ones(1), what="its own check")

    def wrong() -> torch.Tensor:
        return ONE_HOT_SPEC.float()

    def raising() -> None:
        raise StudentError("one_hot", IndexError("out of bounds"), "")
    assert str(failure(lambda: wrong_block(anchored, wrong))).startswith("its own check:"), \
        "a failing block is the property's own failure: what its name says is wrong"
    assert str(failure(lambda: wrong_block(harder_than, wrong))).startswith(
        "stopped by another defect: one_hot of valid labels"), "a harder input cannot tell the two apart"
    assert str(failure(lambda: wrong_block(harder_than, lambda: ONE_HOT_SPEC))).startswith("its own check:")
    assert str(failure(lambda: wrong_block(harder_than, raising))).startswith("its own check:"), \
        "the ordinary call raised: the block's failure says more"

    def course_check() -> None:
        raise AssertionError("the log should be a list")
    said = failure(lambda: assert_ordinary(course_check))
    assert str(said) == "stopped by another defect: the log should be a list"
    assert differences.mistake(record("a", said)) == differences.mistake(
        {"name": "b", "outcome": "failed", "message": "the log should be a list"})


def test_a_reason_whose_properties_were_all_stopped_reads_as_the_defect():
    tests = [record("test_rows_sum_to_one", anchor_failure("output on an ordinary input"), weight=2),
             record("test_masked_weights_are_zero", anchor_failure("output on an ordinary input"))]
    (group,) = present.reasons(drill(*tests))
    assert group["reason"] == "output on an ordinary input: dtype differs: got torch.float32, expected torch.int64"
    assert present.reasons(drill(*tests), translator(Lang.ZH_CN))[0]["reason"].startswith(
        "output on an ordinary input：dtype 不同")


def test_each_stopped_message_reads_as_its_comparison_in_chinese():
    """The catalog holds each stopped form as one sentence: it must say what the
    comparison's own translation says, after one and the same prefix."""
    zh = translator(Lang.ZH_CN).catalog.gettext
    prefixes = set()
    for inner, outer in differences.STOPPED.items():
        said, plain = zh(outer), zh(inner)
        assert said != outer and said.endswith(plain), (outer, said, plain)
        prefixes.add(said[:-len(plain)])
    assert prefixes == {zh(differences.STOPPED_TEXT).removesuffix("{defect}")}


def test_advice_about_an_overflow_needs_inf_or_nan_where_the_oracle_is_finite():
    assert overflowed(torch.tensor([1.0, math.nan]), torch.tensor([1.0, 2.0]))
    assert overflowed(torch.tensor([math.inf]), torch.tensor([3.0]))
    assert not overflowed(torch.tensor([1.0, 2.5]), torch.tensor([1.0, 2.0])), "a wrong finite value"
    assert not overflowed(torch.tensor([math.nan]), torch.tensor([math.nan])), "nan where nan is right"
    assert not overflowed([math.nan], torch.tensor([1.0])) and not overflowed(torch.ones(2), torch.ones(3))


# ------------------------------------------------------------------ the scale, measured

def test_attention_measures_the_scale_of_its_weights():
    attention: Any = importlib.import_module("tests.attention.test_attention")  # the course's, untyped

    q, k, v = attention.SPEC_QKV
    case = (q, k, v, None)

    def answer(divisor: float, dim: int = -1) -> tuple[torch.Tensor, torch.Tensor]:
        p = (q @ k.T / divisor).softmax(dim)
        return p @ v, p

    assert attention.implied_divisor(answer(2.0), case) == pytest.approx(2.0, rel=1e-4)  # / d_k
    assert attention.implied_divisor(answer(1.0), case) == pytest.approx(1.0, rel=1e-4)  # not scaled
    assert attention.implied_divisor(answer(math.sqrt(2)), case) == pytest.approx(math.sqrt(2), rel=1e-4)
    assert attention.implied_divisor(answer(math.sqrt(2), dim=-2), case) is None, "no softmax over the keys"
    assert attention.implied_divisor(torch.ones(2), case) is None

    def compared(got) -> None:
        with attention.scale_named(got, case):
            assert_same(got, answer(math.sqrt(2)), what="(output, p_attn)")
    assert str(failure(lambda: compared(answer(2.0)))).startswith(
        "p_attn is softmax(q kᵀ / 2) where the spec divides by sqrt(d_k) = 1.414 (d_k = 2): ")
    wrong_values = (answer(math.sqrt(2))[0] + 1, answer(math.sqrt(2))[1])
    assert str(failure(lambda: compared(wrong_values))).startswith("(output, p_attn)[0]: "), \
        "the right scale is not named as a mistake"


# ------------------------------------------------------------------ the issue's two cases, graded

@pytest.mark.parametrize("drill_id,mutant,named", [
    ("tensors/one_hot", "float_dtype", "dtype differs: got torch.float32, expected torch.int64"),
    ("attention/attention", "scale_by_d_k", "where the spec divides by sqrt(d_k)"),
])
def test_one_bug_is_one_reason_that_names_it(drill_id, mutant, named, tmp_path_factory):
    """The mutant corpus' shared gradings (each mutant on the properties that catch it)."""
    k = next(k for d, k, path in CASES if d == drill_id and path.stem == mutant)
    graded = exercise(graded_round(k, tmp_path_factory), drill_id)
    found = present.reasons(graded)
    lost = [t["name"] for t in graded["tests"] if t["outcome"] in present.PROBLEMS]
    assert len(lost) >= 2 and len(found) == 1, [g["reason"] for g in found]
    assert named in found[0]["reason"]
