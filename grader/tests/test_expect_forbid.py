"""assert_same cannot be fooled; the forbidden-API guard sees functions, methods, classes."""

from __future__ import annotations

import importlib
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from torch.utils.data import DistributedSampler

from grader.contract.expect import Mismatch, assert_same
from grader.contract.forbid import Forbidden, ForbiddenAPIError


class AlwaysEqual:
    def __eq__(self, other):
        return True


@pytest.mark.parametrize("got,expected,kind", [
    (torch.zeros(2), torch.zeros(2, dtype=torch.int64), "dtype"),
    (torch.zeros(2, 1), torch.zeros(2), "shape"),
    (AlwaysEqual(), torch.zeros(2), "type"),
    (torch.zeros(2).as_subclass(type("Sub", (torch.Tensor,), {})), torch.zeros(2), "type"),
    ([1, 2], (1, 2), "type"),
    (1, 1.0, "type"),
    (torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.5]), "values"),
    (torch.tensor([float("nan")]), torch.tensor([0.0]), "values"),
])
def test_assert_same_refuses(got, expected, kind):
    with pytest.raises(Mismatch) as info:
        assert_same(got, expected)
    assert info.value.details["diff"]["kind"] == kind


class _LyingTuple(tuple):
    def __eq__(self, other):
        return True

    def __iter__(self):
        return iter((1, 2))

    def __len__(self):
        return 2


def test_a_tuple_subclass_is_a_tuple_judged_by_the_items_it_holds():
    """The spec's "a tuple of ints": torch.Size (what torch returns) is one, a named tuple
    too; what is compared is what the tuple holds, not what its methods say."""
    assert_same(torch.Size([2, 3]), (2, 3))
    assert_same((2, 3), torch.Size([2, 3]))
    assert_same(torch.Size([]), ())
    with pytest.raises(Mismatch) as info:
        assert_same(_LyingTuple((1, 2, 3)), (1, 2))
    assert info.value.details["diff"]["kind"] == "length"
    with pytest.raises(Mismatch) as info:
        assert_same(torch.Size([2, 4]), (2, 3))
    assert info.value.details["diff"]["kind"] == "value"
    with pytest.raises(Mismatch):
        assert_same(torch.Size([2, 3]), [2, 3])


def test_value_diff_names_count_and_first_index():
    with pytest.raises(Mismatch) as info:
        assert_same(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([[1.0, 2.0], [3.0, 5.0]]))
    diff = info.value.details["diff"]
    assert diff["mismatched"] == 1 and diff["first_indices"] == [[1, 1]] and diff["max_abs_error"] == 1.0


def test_guard_records_functions_methods_and_classes():
    forbidden = Forbidden.from_marker({"F.one_hot": "scatter", "Tensor.stride": "compute it",
                                       "torch.utils.data.DistributedSampler": "randperm"})
    # torch's stubs want a Dataset where DistributedSampler only takes len() of it: a range is one
    action: Callable[[], object]
    for action in (lambda: F.one_hot(torch.tensor([1]), 2), lambda: torch.zeros(2).stride(),
                   lambda: DistributedSampler(range(4), num_replicas=2, rank=0)):  # type: ignore[arg-type]
        with forbidden.guard() as uses:
            with pytest.raises(ForbiddenAPIError):
                action()
        assert len(uses) == 1
    # outside the guard everything works again
    assert DistributedSampler(range(4), num_replicas=2, rank=0).num_samples == 2  # type: ignore[arg-type]
    assert torch.zeros(2).stride() == (1,)


def test_guard_recognises_builtins_without_a_resolvable_name():
    """torch._C._nn.pad_sequence (behind nn.utils.rnn.pad_sequence) has no name for
    resolve_name: the guard matches the forbidden object itself."""
    from torch.nn.utils.rnn import pad_sequence
    forbidden = Forbidden.from_marker({"torch._C._nn.pad_sequence": "copy into a full tensor"})
    with forbidden.guard() as uses:
        with pytest.raises(ForbiddenAPIError):
            pad_sequence([torch.ones(2), torch.ones(1)], batch_first=True)
    assert [u.name for u in uses] == ["torch._C._nn.pad_sequence"]
    assert pad_sequence([torch.ones(1)]).shape == (1, 1)


def test_guard_sees_functions_torch_function_cannot():
    """torch.broadcast_shapes takes no tensor, so only the call watch can see it."""
    from torch.functional import broadcast_shapes as imported_early
    forbidden = Forbidden.from_marker({"torch.broadcast_shapes": "align the shapes by hand"})
    with forbidden.guard() as uses:
        with pytest.raises(ForbiddenAPIError):
            imported_early((2, 1), (3,))
    assert [use.name for use in uses] == ["torch.broadcast_shapes"]
    assert torch.broadcast_shapes((2, 1), (3,)) == (2, 3)  # and works again outside


def test_guard_sees_plain_python_helpers():
    """fuse_conv_bn_eval never asks for __torch_function__: the call watch refuses it."""
    from torch import nn
    from torch.nn.utils.fusion import fuse_conv_bn_eval as fold
    name = "torch.nn.utils.fusion.fuse_conv_bn_eval"
    conv, bn = nn.Conv2d(1, 1, 1).eval(), nn.BatchNorm2d(1).eval()
    with Forbidden.from_marker({name: "fold it yourself"}).guard() as uses:
        with pytest.raises(ForbiddenAPIError):
            fold(conv, bn)
    assert [use.name for use in uses] == [name]
    assert isinstance(fold(conv, bn), nn.Conv2d)


def test_loaded_modules_do_not_feed_hypothesis_constants(tmp_path):
    """Examples must not depend on which submissions a process happened to import."""
    from hypothesis.internal.conjecture import providers

    from grader.grading import profiles

    profiles.pin_constants()  # as a grading session does

    from grader.contract.loader import load_exercise

    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "consts.py").write_text("MAGIC = 987654321\nNAME = 'student-chosen'\n")
    load_exercise(tmp_path, "demo/consts")
    constants = providers._get_local_constants()
    assert 987654321 not in constants.set_for_type("integer")
    assert len(constants) == 0


def test_a_module_in_a_marker_forbids_every_api_of_it():
    """``forbid={"torch.autograd.functional": ...}`` stands for its ``__all__``: the capability,
    not the two names a spec happened to list."""
    forbidden = Forbidden.from_marker({"torch.autograd.functional": "by hand", "F.one_hot": "scatter"})
    assert {"torch.autograd.functional.vjp", "torch.autograd.functional.hvp",
            "torch.autograd.functional.jacobian", "torch.nn.functional.one_hot"} <= set(forbidden.hints)
    with forbidden.guard() as uses:
        with pytest.raises(ForbiddenAPIError):
            torch.autograd.functional.vhp(lambda x: (x ** 3).sum(), torch.ones(2), torch.ones(2))
    assert [u.name for u in uses] == ["torch.autograd.functional.vhp"]


def test_a_drill_that_forbids_anything_forbids_numpy():
    """np.bincount is torch.bincount by another name: a guarded call may not hand a tensor to
    numpy, nor take numpy's attributes (from its plain numbers either); torch's own code may
    (its lazily imported modules read numpy as they load), and so may anyone outside the call."""
    import numpy as np

    forbidden = Forbidden.from_marker({"torch.bincount": "count with index_put_"})
    labels = torch.tensor([0, 2, 2])
    action: Callable[[], object]
    for action, name in ((lambda: np.bincount(labels.tolist()), "numpy.bincount"),
                         (lambda: labels.numpy(), "torch.Tensor.numpy"),
                         (lambda: np.lib.stride_tricks, "numpy.lib"),
                         (lambda: vars(np)["bincount"], "numpy.__dict__"),
                         (lambda: np.from_dlpack(labels), "numpy.from_dlpack")):
        with forbidden.guard() as uses:
            with pytest.raises(ForbiddenAPIError):
                action()
        assert [u.name for u in uses] == [name]
    with forbidden.guard() as uses:
        importlib.import_module("torch._dynamo.utils")  # torch's code: np.fft at import
        assert labels.sum().item() == 4
    assert uses == []
    assert np.bincount(labels.tolist()).tolist() == [1, 0, 2]  # outside the call, numpy is numpy
    assert Forbidden.from_marker({}).hints == {}  # a drill that forbids nothing keeps numpy


def test_a_numpy_function_taken_at_import_fails_every_call(tmp_path):
    """``from numpy import bincount`` at the top of a drill's file is a use made as it loads:
    every call of that drill fails on it (a sandbox worker's armor refuses it there too)."""
    from grader.contract.impl import Implementation

    (tmp_path / "losses").mkdir()
    (tmp_path / "losses" / "counts.py").write_text(
        "from numpy import bincount\n\ndef count(labels):\n    return bincount(labels.tolist())\n")
    impl = Implementation(tmp_path, "losses/counts", Forbidden.from_marker({"torch.bincount": "by hand"}))
    with pytest.raises(AssertionError, match=r"count\(\) called numpy.bincount"):
        impl.count(torch.tensor([1, 1]))


def test_guard_sees_autograds_engine_however_it_is_reached():
    """The engine's run_backward is a C method no TorchFunctionMode hears of: the call watch
    refuses it bound to torch's engine or to a new one of its class."""
    engines = (torch.autograd.Variable._execution_engine, torch._C._ImperativeEngine())
    forbidden = Forbidden.from_marker({"torch._C._ImperativeEngine.run_backward": "by hand"})
    for engine in engines:
        x = torch.ones(2, requires_grad=True)
        with forbidden.guard() as uses:
            with pytest.raises(ForbiddenAPIError):
                engine.run_backward(((x * 2).sum(),), (torch.ones(()),), False, False, (x,), False)
        assert [u.name for u in uses] == ["torch._C._ImperativeEngine.run_backward"]
    x = torch.ones(2, requires_grad=True)
    (x * 2).sum().backward()  # outside the call, autograd works
    assert x.grad is not None and x.grad.tolist() == [2.0, 2.0]


def test_a_forbidden_api_stands_for_its_operators_in_process_too():
    """torch's functions named after an operator of a forbidden API compute it: refused by
    the mode (a worker's armor refuses the operators themselves), whatever torch calls them."""
    forbidden = Forbidden.from_marker({"F.batch_norm": "normalise by hand"})
    x, mean, var = torch.randn(4, 3), torch.zeros(3), torch.ones(3)
    for call, name in ((lambda: torch._native_batch_norm_legit_no_training(x, None, None, mean, var, 0.0, 1e-5),
                        "torch._native_batch_norm_legit_no_training"),
                       (lambda: torch._batch_norm_impl_index(x, None, None, mean, var, False, 0.1, 1e-5, False),
                        "torch._batch_norm_impl_index")):
        with forbidden.guard() as uses:
            with pytest.raises(ForbiddenAPIError):
                call()
        assert [u.name for u in uses] == [name]
    with forbidden.guard() as uses:  # what computes something else still runs
        F.layer_norm(x, (3,))
    assert uses == []
