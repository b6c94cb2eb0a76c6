"""The armor (grader.sandbox.armor) refuses a forbidden API with its twins: torch's other
Python routes to the same maths, and its own source run again.

The sandboxed gradings of ``adversarial/twin_*`` and ``adversarial/source_reexec`` prove
it end to end; these tests pin the rules down quickly. The armor is for good (it replaces
code and installs an audit hook), so what installs it runs in a child interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest
import torch
import torch._decomp.decompositions as decompositions
import torch._functorch.eager_transforms as eager_transforms
import torch._refs as refs
import torch._refs.nn.functional as ref_functional
import torch.masked._ops as masked_ops

from grader.sandbox import armor

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name,twin", [
    ("torch.nn.functional.one_hot", decompositions.one_hot),  # a py_impl kernel of aten::one_hot
    ("torch.layer_norm", refs.native_layer_norm),  # the decomposition of aten::native_layer_norm
    ("torch.nn.functional.layer_norm", ref_functional.layer_norm),  # torch._refs' own map
    ("torch.nn.functional.nll_loss", ref_functional.nll_loss),
    ("torch.nn.functional.nll_loss", ref_functional._nll_loss_nd),  # a helper named after it
    ("torch.nn.functional.nll_loss", decompositions.nll_loss_forward),
    ("torch.broadcast_shapes", refs.broadcast_shapes),
    ("torch.broadcast_shapes", refs._broadcast_shapes),
    ("torch.nn.functional.max_pool2d", decompositions.max_pool2d_with_indices),
    ("torch.nn.functional.max_pool2d", decompositions._max_pool_nd_with_indices),
    ("torch.nn.functional.batch_norm", decompositions.native_batch_norm),
    # the capability: what the forbidden API computes, by its other public spellings' operators
    ("torch.nn.functional.log_softmax", decompositions._log_softmax),
    ("torch.nn.functional.group_norm", refs.native_group_norm),
    # namesakes: private functions named after the API or its operators, anywhere in torch
    ("torch.func.grad", eager_transforms.grad_impl),
    ("torch.func.vjp", eager_transforms._vjp_with_argnums),
    ("torch.logsumexp", masked_ops.logsumexp),
])
def test_twins_are_found_in_torchs_own_tables(name, twin):
    assert twin in armor.twins_of(name)


def test_namesakes_in_modules_not_loaded_are_found_from_torchs_source():
    """FSDP's ``ShardedGradScaler._amp_update_scale_cpu_`` is ``torch._amp_update_scale_`` in
    Python; its module is loaded lazily, so the armor finds it by reading torch's source."""
    assert ("torch.distributed.fsdp.sharded_grad_scaler", "_amp_update_scale_cpu_") \
        in armor.namesake_sites("torch._amp_update_scale_")
    assert ("torch.backends._nnapi.serializer", "broadcast_shapes") in armor.namesake_sites("torch.broadcast_shapes")


def test_a_name_shared_by_chance_is_no_namesake():
    """An API's own name matches module-level functions only, and never public functions of
    public modules: ``torch.func.grad`` does not take ``torch.autograd.grad`` or ``Tensor.grad``
    with it; an operator refused by name only (``as_strided``) has no namesakes."""
    twins = armor.twins_of("torch.func.grad")
    assert torch.autograd.grad not in twins and vars(torch._C.TensorBase)["grad"].__get__ not in twins
    assert not armor.namesake_sites("torch.Tensor.as_strided")


def test_a_wrapped_twin_is_found_with_what_it_wraps():
    """``out_wrapper`` and the type-promotion wrapper keep the original in ``__wrapped__``:
    calling that one would step around the refused wrapper."""
    twins = armor.twins_of("torch.nn.functional.nll_loss")
    inner: object = ref_functional.nll_loss
    wrapped = 0
    while isinstance(inner := getattr(inner, "__wrapped__", None), types.FunctionType):
        assert inner in twins
        wrapped += 1
    assert wrapped >= 2  # out_wrapper, then the type-promotion wrapper


def test_allowed_apis_have_no_twins_refused():
    assert not {*armor.twins_of("torch.nn.functional.one_hot")} & {refs.add, refs.where, refs.zeros}


# Run in a child: install the armor for one_hot and fuse_conv_bn_eval, then try every route.
_CHILD = textwrap.dedent('''
    import importlib, importlib.util, inspect, json, linecache, os, pathlib, runpy, sys
    import torch
    import torch._decomp.decompositions as decompositions
    import torch._refs as refs
    import torch.nn.utils.fusion as fusion
    from grader.sandbox import armor

    class Refused(Exception):
        pass

    def report(name, hint):
        raise Refused(name)

    armor.preload()
    armor.install({"torch.nn.functional.one_hot": "by hand",
                   "torch.nn.utils.fusion.fuse_conv_bn_eval": "by hand"}, report)
    path, tmp = fusion.__file__, sys.argv[1]
    labels = torch.tensor([0, 2, 1])

    def spec():
        spec = importlib.util.spec_from_file_location("fusion_again", path)
        spec.loader.exec_module(importlib.util.module_from_spec(spec))

    def folder_fd():
        return os.open("fusion.py", os.O_RDONLY, dir_fd=os.open(os.path.dirname(path), os.O_RDONLY))

    def parent_fd():
        top = os.path.dirname(os.path.dirname(torch.__file__))
        return os.open("torch/nn/utils/fusion.py", os.O_RDONLY, dir_fd=os.open(top, os.O_RDONLY))

    ROUTES = {
        "decomposition": lambda: decompositions.one_hot(labels, 3),
        "py_kernel": lambda: torch.ops.aten.one_hot.default.py_kernels[
            torch._C.DispatchKey.CompositeImplicitAutograd](labels, 3),
        "open": lambda: open(path).read(),
        "read_bytes": lambda: pathlib.Path(path).read_bytes(),
        "os.open": lambda: os.open(path, os.O_RDONLY),
        "bytecode": lambda: open(importlib.util.cache_from_source(path), "rb").read(),
        "folder_fd": folder_fd,
        "parent_fd": parent_fd,
        "getsource": lambda: inspect.getsource(fusion),
        "linecache": lambda: linecache.getlines(path) or 1 / 0,
        "loader": lambda: fusion.__loader__.get_source(fusion.__name__),
        "runpy": lambda: runpy.run_path(path),
        "spec": spec,
        "reload": lambda: importlib.reload(fusion),
        "compile": lambda: compile("x = 1", path, "exec"),
        "symlink": lambda: os.symlink(path, os.path.join(tmp, "link.txt")),
        # a module with twins of its own, imported after the armor went on, is refused
        "inductor": lambda: importlib.import_module("torch._inductor.decomposition"),
    }
    said = {}
    for route, attempt in ROUTES.items():
        try:
            attempt()
            said[route] = "WORKED"
        except Refused as exc:
            said[route] = f"reported {exc}"
        except Exception as exc:
            said[route] = type(exc).__name__
    # what the drill allows still works: torch's lazy imports, other twins, its own maths
    import torch.utils.benchmark
    said["lazy import"] = type(torch.utils.benchmark).__name__
    said["allowed twin"] = refs.add(torch.ones(2), 1).tolist()
    said["allowed maths"] = torch.zeros(3, 3).scatter_(1, labels.unsqueeze(1), 1).sum().item()
    print(json.dumps(said))
''')


def test_an_armored_worker_refuses_twins_and_torchs_source_run_again(tmp_path):
    """Every route is refused: a twin reports the forbidden API (and ends a real worker),
    reading torch's armored files raises PermissionError (or, inside linecache, inspect and
    the loader, looks like no source at all); what the drill allows still works."""
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    said = json.loads(proc.stdout.strip().splitlines()[-1])
    assert said.pop("lazy import") == "module"
    assert said.pop("allowed twin") == [2.0, 2.0] and said.pop("allowed maths") == 3.0
    assert said.pop("decomposition") == said.pop("py_kernel") == "reported torch.nn.functional.one_hot"
    # a refusal inside linecache and inspect comes out as "no source" (OSError), not the file
    quiet = {"getsource": "OSError", "linecache": "ZeroDivisionError", "loader": "ImportError"}
    assert said == {route: quiet.get(route, "PermissionError") for route in said}, said
    assert not list(tmp_path.iterdir())


_NAMESAKE_CHILD = textwrap.dedent('''
    import json, torch
    from grader.sandbox import armor

    class Refused(Exception):
        pass

    def report(name, hint):
        raise Refused(name)

    armor.preload()
    armor.install({"torch._amp_update_scale_": "by hand", "torch.nested": "by hand"}, report)
    said = {}
    try:
        from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler
        said["sharded"] = "WORKED"
    except Refused as exc:
        said["sharded"] = f"reported {exc}"
    try:
        torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])
        said["nested"] = "WORKED"
    except Refused as exc:
        said["nested"] = f"reported {exc}"
    said["allowed"] = torch.full((2, 3), 0.5).sum().item()
    print(json.dumps(said))
''')


def test_importing_a_module_that_holds_a_namesake_is_a_use():
    """A namesake in a module not loaded when the armor went on cannot be refused by
    replacing its code: importing that module is a use of the forbidden API. A module in a
    marker forbids every API of it."""
    proc = subprocess.run([sys.executable, "-c", _NAMESAKE_CHILD], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    said = json.loads(proc.stdout.strip().splitlines()[-1])
    assert said == {"sharded": "reported torch._amp_update_scale_",
                    "nested": "reported torch.nested.nested_tensor", "allowed": 3.0}
