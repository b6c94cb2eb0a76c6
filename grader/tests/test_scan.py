"""The static scan (grader.grading.scan): every spelling of a forbidden API is flagged,
nothing else is, and the drills' own references and mutants agree with it."""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
from pathlib import Path
from typing import Any, cast

import pytest

from grader.core import results_json
from grader.core.syllabus import exercise_id
from grader.grading.scan import MAX_FLAGS, Finding, flags_for, scan_file, scan_source

REPO = Path(__file__).resolve().parents[2]
MUTANTS = Path(__file__).parent / "mutants"
ONE_HOT = {"F.one_hot": "scatter_ ones into zeros"}


def names(source: str, forbid=ONE_HOT) -> list[tuple[str, int]]:
    return [(f.name, f.line) for f in scan_source(textwrap.dedent(source), forbid, "x.py")]


# ------------------------------------------------------------------ spellings

@pytest.mark.parametrize("source", [
    "import torch.nn.functional as F\nF.one_hot(x)",
    "import torch.nn.functional as nnf\nnnf.one_hot(x)",
    "import torch\ntorch.nn.functional.one_hot(x)",
    "import torch.nn.functional\ntorch.nn.functional.one_hot(x)",
    "import torch as t\nt.nn.functional.one_hot(x)",
    "from torch import nn\nnn.functional.one_hot(x)",
    "from torch.nn import functional as F\nF.one_hot(x)",
    "import torch.nn.functional as F\ngetattr(F, 'one_hot')(x)",
    "import torch.nn.functional as F\ngetattr(F, 'one_' + 'hot', None)(x)",
    "import torch\ngetattr(getattr(torch.nn, 'functional'), 'one_hot')(x)",
    "import torch.nn.functional as F\nvars(F)['one_hot'](x)",
    "import torch.nn.functional as F\nF.__dict__['one_hot'](x)",
    "import importlib\nimportlib.import_module('torch.nn.functional').one_hot(x)",
    "__import__('torch').nn.functional.one_hot(x)",
    "import torch\ntorch._C._nn.one_hot(x)",  # where torch defines it
])
def test_every_spelling_of_a_forbidden_function_is_flagged(source):
    line = next(n for n, text in enumerate(source.splitlines(), 1) if "one_" in text)
    assert names(source) == [("F.one_hot", line)]


def test_from_imports_flag_the_import_and_every_use():
    found = names("""
        from torch.nn.functional import one_hot as oh
        def f(x):
            return oh(x) + oh(x + 1)
    """)
    assert found == [("F.one_hot", 2), ("F.one_hot", 4), ("F.one_hot", 4)]


def test_names_bound_by_assignment_are_followed():
    assert names("""
        import torch.nn.functional as F
        G = F
        H = G
        encode = H.one_hot
        encode(x)
        G = None
    """) == [("F.one_hot", 5), ("F.one_hot", 6)]


def test_star_import_then_bare_name():
    assert names("from torch.nn.functional import *\none_hot(x)") == [("F.one_hot", 2)]


def test_a_class_is_flagged_where_torch_defines_it_too():
    forbid = {"torch.utils.data.DistributedSampler": "build the list yourself"}
    found = names("from torch.utils.data.distributed import DistributedSampler as S\nS(d)", forbid)
    assert found == [("torch.utils.data.DistributedSampler", 1),
                     ("torch.utils.data.DistributedSampler", 2)]
    assert names("from torch import nn\nclass B(nn.LayerNorm): pass", {"nn.LayerNorm": "-"}) == \
        [("nn.LayerNorm", 2)]


def test_finding_fields_name_line_col_and_stripped_code():
    [f] = scan_source("import torch.nn.functional as F\n\ndef f(x):\n    return F.one_hot(x, 3)  # no\n",
                      ONE_HOT, "x.py")
    assert f == Finding("F.one_hot", 4, 12, "return F.one_hot(x, 3)  # no")
    assert f.as_json() == {"name": "F.one_hot", "line": 4, "col": 12,
                           "code": "return F.one_hot(x, 3)  # no", "indirect": False}


def test_dynamic_import_of_a_module_holding_it_is_flagged_as_indirect():
    [f] = scan_source("import importlib\nm = importlib.import_module('torch.nn.functional')\n",
                      ONE_HOT, "x.py")
    assert (f.name, f.line, f.indirect) == ("F.one_hot", 2, True)
    [g] = scan_source("m = __import__('torch.nn.functional')\n", ONE_HOT, "x.py")
    assert g.indirect
    assert scan_source("import importlib\nimportlib.import_module('math')\n", ONE_HOT, "x.py") == []


# ------------------------------------------------------------------ tensor methods

def test_a_forbidden_tensor_method_is_flagged_on_any_receiver():
    forbid = {"Tensor.stride": "compute it", "torch.gather": "index", "Tensor.gather": "index"}
    found = names("""
        import torch
        def f(x, t):
            a = x.stride()
            b = t.view(-1).stride(0)
            c = getattr(x, "stride")()
            d = torch.Tensor.stride(x)
            e = torch.gather(x, 0, i)
            g = x.gather(0, i)
            x.stride = 3
            return x.strides, x.size()
    """, forbid)
    assert found == [("Tensor.stride", 4), ("Tensor.stride", 5), ("Tensor.stride", 6),
                     ("Tensor.stride", 7), ("torch.gather", 8), ("Tensor.gather", 9)]


# ------------------------------------------------------------------ not flagged

def test_comments_strings_and_other_names_are_not_flagged():
    assert names('''
        """Do not call F.one_hot(x): build it with scatter_."""
        import torch
        import torch.nn.functional as F
        # F.one_hot(labels) would be cheating
        HINT = "F.one_hot is forbidden; torch.nn.functional.one_hot too"
        def one_hot(labels, n):
            out = torch.zeros(*labels.shape, n).scatter_(-1, labels.unsqueeze(-1), 1)
            return F.relu(out), one_hot, getattr(F, name)
    ''') == []


def test_nothing_forbidden_means_nothing_to_find():
    assert scan_source("import torch.nn.functional as F\nF.one_hot(x)", {}, "x.py") == []
    assert scan_source("import torch.nn.functional as F\nF.one_hot(x)", None, "x.py") == []


@pytest.mark.parametrize("source", ["def f(:\n    F.one_hot(x)", "x = 1\0", "(" * 300 + ")" * 300])
def test_a_file_that_does_not_parse_gives_no_findings(source):
    assert scan_source(source, ONE_HOT, "x.py") == []


# ------------------------------------------------------------------ files and results

def test_flags_for_reads_the_exercise_file_of_a_submission(tmp_path):
    (tmp_path / "tensors").mkdir()
    (tmp_path / "tensors" / "one_hot.py").write_text("import torch.nn.functional as F\nF.one_hot(x)\n")
    assert flags_for(tmp_path, "tensors/one_hot", ONE_HOT) == [
        {"name": "F.one_hot", "line": 2, "col": 1, "code": "F.one_hot(x)", "indirect": False}]
    assert flags_for(tmp_path, "tensors/missing", ONE_HOT) == []
    assert flags_for(tmp_path, "tensors/one_hot", None) == []


def test_flags_for_never_follows_a_link_out_of_the_submission(tmp_path):
    outside = tmp_path / "secret.py"
    outside.write_text("import torch.nn.functional as F\nF.one_hot(x)\n")
    submission = tmp_path / "submission"
    (submission / "tensors").mkdir(parents=True)
    (submission / "tensors" / "one_hot.py").symlink_to(outside)
    (submission / "linked").symlink_to(tmp_path)
    assert flags_for(submission, "tensors/one_hot", ONE_HOT) == []
    assert flags_for(submission, "linked/secret", ONE_HOT) == []
    assert scan_file(submission / "tensors" / "one_hot.py", ONE_HOT) == []


def test_a_hostile_file_cannot_bloat_results(tmp_path):
    (tmp_path / "c.py").write_text("y = x.stride()  # " + "z" * 5000 + "\n" + "x.stride()\n" * 500)
    flags = flags_for(tmp_path, "c", {"Tensor.stride": "-"})
    assert len(flags) == MAX_FLAGS and len(flags[0]["code"]) <= 200


def test_results_carry_static_flags_and_old_files_still_load(tmp_path):
    flag = {"name": "F.one_hot", "line": 2, "col": 1, "code": "F.one_hot(x)", "indirect": False}
    exercises = {"a/x": results_json.ExerciseInfo("a/x", 10, static_flags=[flag]),
                 "a/y": results_json.ExerciseInfo("a/y", 5)}
    tests = [results_json.TestRecord("a/x", "test_p", "passed"),
             results_json.TestRecord("a/y", "test_q", "failed")]
    built = results_json.build("sub", exercises, tests)
    assert [e["static_flags"] for e in built["exercises"]] == [[flag], []]
    assert built["score"] == 10, "a static flag costs no points"
    for e in cast("list[dict[str, Any]]", built["exercises"]):  # plain dicts: the key is required
        del e["static_flags"]  # as written before the field existed
    path = tmp_path / "results.json"
    path.write_text(json.dumps(built))
    assert [e["static_flags"] for e in results_json.read(path)["exercises"]] == [[], []]


# ------------------------------------------------------------------ the drills themselves

def forbid_specs() -> dict[str, dict[str, str]]:
    """Exercise id -> its test module's ``forbid`` (imported: some specs are computed,
    e.g. pool2d forbids every pooling function of ``F``). The ``tests`` package is
    dropped from ``sys.modules`` afterwards, so no later import of a ``tests``
    package in this process finds ours."""
    specs = {}
    before = set(sys.modules)
    try:
        for path in sorted((REPO / "tests").rglob("test_*.py")):
            module = importlib.import_module(".".join(path.relative_to(REPO).with_suffix("").parts))
            marks = getattr(module, "pytestmark", [])
            for mark in marks if isinstance(marks, list) else [marks]:
                if mark.name == "exercise":
                    specs[exercise_id(path)] = dict(mark.kwargs.get("forbid") or {})
    finally:
        for name in set(sys.modules) - before:
            if name == "tests" or name.startswith("tests."):
                del sys.modules[name]
    return specs


SPECS = forbid_specs()


def test_the_specs_were_found():
    assert len(SPECS) >= 20 and SPECS["tensors/one_hot"].keys() == {"F.one_hot"}
    assert sum(bool(s) for s in SPECS.values()) >= 15


@pytest.mark.parametrize("eid", sorted(SPECS))
def test_no_reference_uses_what_its_drill_forbids(eid):
    path = REPO / "reference" / f"{eid}.py"
    assert path.is_file()
    assert scan_file(path, SPECS[eid]) == []


# Every mutant that reaches for a forbidden API, and what it reaches for; every other
# mutant must scan clean (no false alarms on honest, if wrong, code).
FLAGGED_MUTANTS = {
    "losses/accuracy/uses_bincount.py": {"torch.bincount"},
    "nn/containers/uses_get_clones.py": {"torch.nn.modules.transformer._get_clones"},
    "nn/conv2d/uses_f_conv2d.py": {"F.conv2d"},
    "nn/conv_transpose/uses_f_conv_transpose2d.py": {"F.conv_transpose2d"},
    "nn/fuse_conv_bn/uses_torch_fuser.py": {"torch.nn.utils.fusion.fuse_conv_bn_eval"},
    "nn/pool2d/uses_f_pooling.py": {"F.max_pool2d", "F.avg_pool2d"},
    "tensors/broadcast/uses_broadcast_shapes.py": {"torch.broadcast_shapes", "Tensor.expand"},
    "tensors/contiguity/asks_torchs_own_helpers.py": {"torch._prims_common.make_contiguous_strides_for",
                                                      "torch.fx.experimental.sym_node.sympy_is_contiguous"},
    "tensors/one_hot/uses_f_one_hot.py": {"F.one_hot"},
    "tensors/repeat_interleave/uses_tensor_method.py": {"Tensor.repeat_interleave"},
    "nn/state/strip_with_torch_consume.py": {"torch.nn.modules.utils.consume_prefix_in_state_dict_if_present"},
    "tensors/scatter/uses_torch_scatter.py": {"torch.gather", "Tensor.scatter"},
    "tensors/views/asks_torchs_own_helper.py": {"torch._subclasses.fake_impls._compute_stride"},
}


def test_mutants_that_use_a_forbidden_api_are_flagged_and_no_others():
    flagged = {}
    for path in sorted(MUTANTS.rglob("*.py")):
        drill = path.parent.relative_to(MUTANTS).as_posix()
        found = {f.name for f in scan_file(path, SPECS[drill])}
        if found:
            flagged[path.relative_to(MUTANTS).as_posix()] = found
    assert flagged == FLAGGED_MUTANTS


def test_routes_around_the_guard_are_flagged_for_the_instructor():
    """What the worker refuses at run time (grader.sandbox.armor) and what it cannot
    refuse alike: every route a submission took around the guard is a finding, marked
    indirect; a forbidden use through one of them is reported once, as the use."""
    source = textwrap.dedent("""
        import sys, threading
        import torch
        from torch._C import DisableTorchFunction
        def one_hot(labels, n=-1):
            sys.setprofile(None)
            with torch._C.DisableTorchFunction():
                x = torch.ops.aten.one_hot(labels, n)
            threading.Thread(target=print).start()
            exec("1")
            return torch._C._nn.one_hot(labels)
    """)
    found = [(f.name, f.line, f.indirect) for f in scan_source(source, ONE_HOT, "x.py")]
    assert found == [("threading", 2, True), ("torch._C", 4, True), ("sys.setprofile", 6, True),
                     ("torch._C", 7, True), ("torch.ops", 8, True), ("threading", 9, True),
                     ("builtins.exec", 10, True), ("F.one_hot", 11, False)]
    assert scan_source("import threading\n", {}, "x.py") == []  # nothing forbidden: nothing to guard


def test_numpy_and_a_modules_own_getattr_are_flagged_as_routes():
    """numpy does a forbidden API's work by another name: importing it, naming it in a string
    (``torch._utils._import_dotted_name("numpy.bincount")``) and taking an attribute past a
    module's own ``__getattribute__`` are findings in a drill that forbids anything."""
    source = textwrap.dedent("""
        import numpy as np
        from torch._utils import _import_dotted_name
        def one_hot(labels, n=-1):
            count = _import_dotted_name("numpy.bincount")
            return object.__getattribute__(np, "eye")
    """)
    found = [(f.name, f.line, f.indirect) for f in scan_source(source, ONE_HOT, "x.py")]
    assert found == [("numpy", 2, True), ("numpy", 5, True), ("__getattribute__", 6, True), ("numpy", 6, True)]
    assert scan_source("import numpy\n", {}, "x.py") == []


def test_twins_and_torch_source_are_flagged_as_routes():
    """torch's twins of a forbidden API (``torch._refs``, ``torch._decomp``, ``torch._prims``)
    and every way to read a torch module's source and run it again are routes: the worker
    refuses what it can (the twins' code, opening torch's files), the scan says where a
    submission went looking; a twin named after the forbidden API is flagged as that API."""
    source = textwrap.dedent("""
        import torch, runpy, linecache, importlib
        import torch._refs as refs
        from torch._decomp import decompositions
        from torch._prims_common import make_contiguous_strides_for
        import importlib.util
        from torch.nn.utils import fusion
        def one_hot(labels, n=-1):
            decompositions.one_hot(labels, n)
            refs.nn.functional.nll_loss(labels, labels)
            torch._prims.broadcast_in_dim(labels, [2], [0])
            text = open(fusion.__file__).read()
            runpy.run_path(torch.__file__)
            linecache.getlines(fusion.__spec__.origin)
            importlib.util.spec_from_file_location("f", "x")
            importlib.reload(fusion)
            return make_contiguous_strides_for((2, 3))
    """)
    found = [(f.name, f.line, f.indirect) for f in scan_source(source, ONE_HOT, "x.py")]
    assert found == [
        ("linecache", 2, True), ("runpy", 2, True), ("torch._refs", 3, True),
        ("torch._decomp", 4, True), ("torch._prims_common", 5, True), ("importlib.util", 6, True),
        ("F.one_hot", 9, True), ("torch._refs", 10, True), ("torch._prims", 11, True),
        ("torch.__file__", 12, True), ("runpy", 13, True), ("torch.__file__", 13, True),
        ("linecache", 14, True), ("torch.__file__", 14, True), ("importlib.util", 15, True),
        ("importlib.reload", 16, True), ("torch._prims_common", 17, True)]


def test_importing_the_grader_is_flagged_as_a_route():
    """A submission has no business with the grader's own modules (where a worker keeps its
    records): a sandbox worker refuses to import them (``worker._seal_grader``), and the
    scan says where a submission tried, however it spelled the import."""
    source = textwrap.dedent("""
        import grader.contract.effects as effects
        from grader.sandbox import worker
        import importlib
        def one_hot(labels, n=-1):
            importlib.import_module("grader.contract.effects")
            return worker
    """)
    found = [(f.name, f.line, f.indirect) for f in scan_source(source, ONE_HOT, "x.py")]
    assert found == [("grader", 2, True), ("grader", 3, True), ("grader", 6, True), ("grader", 7, True)]


def test_a_forbidden_module_and_torchs_namesakes_are_flagged():
    """A marker may forbid a module (``torch.nested``): every API of it is flagged. A private
    function or method anywhere in torch named after a forbidden operator (FSDP's
    ``ShardedGradScaler._amp_update_scale_cpu_``, a pure-Python ``torch._amp_update_scale_``)
    is flagged as a route to that API, as the armor refuses it."""
    source = textwrap.dedent("""
        import torch
        from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler
        from torch.backends._nnapi.serializer import broadcast_shapes
        def f(values, state, found_inf):
            padded = torch.nested.nested_tensor(values).to_padded_tensor(0)
            ShardedGradScaler._amp_update_scale_cpu_(state, found_inf)
            return broadcast_shapes((2, 1), (1, 3)), ShardedGradScaler.update
    """)
    forbid = {"torch.nested": "by hand", "torch._amp_update_scale_": "by hand",
              "torch.broadcast_shapes": "by hand"}
    found = [(f.name, f.line, f.indirect) for f in scan_source(source, forbid, "x.py")]
    assert found == [("torch.broadcast_shapes", 4, True), ("torch.nested", 6, False),
                     ("torch._amp_update_scale_", 7, True), ("torch.broadcast_shapes", 8, True)]
