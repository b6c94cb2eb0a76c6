"""The forbidden-API guard of a sandboxed worker, installed out of the submission's reach.

The in-process guard (``grader.contract.forbid``) watches one call in one thread: a
``TorchFunctionMode`` and a profile hook, which a helper thread, ``sys.setprofile(None)``,
``torch._C.DisableTorchFunction()`` or a call through ``torch.ops.aten`` step around,
and whose own functions a submission could replace. A worker runs nothing but the
submission, so before the submission is imported ``install`` makes every forbidden
API unusable there for good, in every thread, by every route it knows:

- at torch's dispatcher, the aten operators that compute a forbidden function
  (``KERNELS``: ``F.one_hot`` is ``aten::one_hot``; ``F.batch_norm`` is every batch-norm
  kernel) get a kernel of ours: ``F.one_hot``, ``torch.ops.aten.one_hot`` and
  ``DisableTorchFunction`` all end there;
- forbidden Python functions have their code replaced, forbidden classes their
  methods, forbidden names in their modules (and ``torch.Tensor``) are rebound;
- an audit hook, which cannot be removed, refuses what would reach or rewrite that
  machinery from Python: gc's object walks, ctypes, writing ``/proc/self/mem``.

Every one of them calls ``report(name, hint)``, which tells the grader which API was
used and ends the worker: a use cannot be caught and forgotten, because no code of
the submission runs after it. Where a forbidden API is only a Python method with no
operator behind it (``Tensor.stride``, ``Tensor.is_contiguous``) or shares its kernel
with an allowed one (``torch.convolution`` in the transposed-convolution drill, whose
spec allows ``F.conv2d``), it is refused by name only; reaching it through
``torch._C`` or ``torch.ops`` is left to the static scan, which flags both for the
instructor (``grader.grading.scan``).
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
import types
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import torch

from grader.contract.forbid import resolve

Report = Callable[[str, str], None]

_POOLS = ("max_pool1d", "max_pool1d_with_indices", "max_pool2d", "max_pool2d_with_indices",
          "max_pool3d", "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d",
          "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "_adaptive_avg_pool2d",
          "_adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
          "fractional_max_pool2d", "fractional_max_pool3d", "max_unpool2d", "max_unpool3d")
_CONVS = ("conv1d", "conv2d", "conv3d", "convolution", "_convolution", "_convolution_mode",
          "convolution_overrideable", "mkldnn_convolution", "_slow_conv2d_forward", "thnn_conv2d",
          "slow_conv3d", "slow_conv3d_forward", "slow_conv_dilated2d", "slow_conv_dilated3d",
          "_nnpack_spatial_convolution", "conv_tbc", "cudnn_convolution", "miopen_convolution")
_TRANSPOSED_CONVS = ("conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "slow_conv_transpose2d",
                     "slow_conv_transpose3d", "cudnn_convolution_transpose", "miopen_convolution_transpose")
_BATCH_NORMS = ("batch_norm", "_batch_norm_impl_index", "_batch_norm_no_update", "_batch_norm_with_update",
                "_batch_norm_with_update_functional", "_native_batch_norm_legit",
                "_native_batch_norm_legit_functional", "_native_batch_norm_legit_no_training",
                "native_batch_norm", "batch_norm_update_stats", "batch_norm_stats", "batch_norm_elemt",
                "batch_norm_gather_stats", "batch_norm_gather_stats_with_counts", "cudnn_batch_norm",
                "miopen_batch_norm")
_ATTENTION = ("scaled_dot_product_attention", "_scaled_dot_product_attention_math",
              "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_fused_attention_overrideable",
              "_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
              "_scaled_dot_product_cudnn_attention")
_F = "torch.nn.functional."

# Forbidden API (canonical name) -> the aten operators (base names) that compute it. Names
# not listed use the aten operator of their own last name, where one exists. An empty
# entry: refused by name only (the operator serves allowed APIs, or trusted worker code).
KERNELS: dict[str, tuple[str, ...]] = {
    **{f"{_F}conv{d}d": _CONVS for d in (1, 2, 3)},
    **{f"{_F}conv_transpose{d}d": _TRANSPOSED_CONVS for d in (1, 2, 3)},
    "torch.convolution": (),
    f"{_F}layer_norm": ("layer_norm", "native_layer_norm"),
    "torch.layer_norm": ("layer_norm", "native_layer_norm"),
    f"{_F}batch_norm": _BATCH_NORMS,
    "torch.batch_norm": _BATCH_NORMS,
    f"{_F}cross_entropy": ("cross_entropy_loss",),
    f"{_F}nll_loss": ("nll_loss", "nll_loss2d", "nll_loss_nd", "nll_loss_forward", "nll_loss2d_forward"),
    f"{_F}scaled_dot_product_attention": _ATTENTION,
    f"{_F}multi_head_attention_forward": ("_native_multi_head_attention",),
    "torch.scatter": ("scatter", "scatter_"),
    "torch.Tensor.scatter": ("scatter", "scatter_"),
    "torch.Tensor.scatter_": ("scatter", "scatter_"),
    "torch.scatter_add": ("scatter_add", "scatter_add_"),
    "torch.Tensor.scatter_add": ("scatter_add", "scatter_add_"),
    "torch.Tensor.scatter_add_": ("scatter_add", "scatter_add_"),
    "torch.scatter_reduce": ("scatter_reduce", "scatter_reduce_"),
    "torch.Tensor.scatter_reduce": ("scatter_reduce", "scatter_reduce_"),
    "torch.Tensor.scatter_reduce_": ("scatter_reduce", "scatter_reduce_"),
    "torch.empty_strided": (),  # the wire's own decoding makes empty strided tensors
    "torch.Tensor.as_strided": (),  # and encodes through as_strided
    **{f"{_F}{name}": _POOLS for name in dir(torch.nn.functional) if "pool" in name},
}
_KEYS = ("CompositeImplicitAutograd", "CompositeExplicitAutograd", "CPU", "CUDA")


def kernels_of(name: str) -> tuple[str, ...]:
    """The aten operators (base names) behind the forbidden API ``name`` (canonical)."""
    if name in KERNELS:
        return KERNELS[name]
    return (name.rpartition(".")[2],)


def _operators(bases: tuple[str, ...]) -> list[str]:
    """Every overload of the aten operators ``bases`` this torch has."""
    index = _overloads()
    return sorted(op for base in set(bases) for op in index.get(base, ()))


@functools.cache
def _overloads() -> dict[str, tuple[str, ...]]:
    """aten operator base name -> its overloads (``aten::one_hot`` -> ``("aten::one_hot",)``).

    Reading torch's list of operators took ~2 ms, and the pooling drill forbids 55
    names: 0.2 s of each of its workers' start. ``preload`` builds it in the zygote,
    once; the workers it forks inherit it."""
    index: dict[str, list[str]] = {}
    for op in torch._C._dispatch_get_all_op_names():
        if op.startswith("aten::"):
            index.setdefault(op[6:].partition(".")[0], []).append(op)
    return {base: tuple(ops) for base, ops in index.items()}


def preload() -> None:
    """What every worker's ``install`` needs, made once in the zygote before it forks."""
    _overloads()


def install(hints: Mapping[str, str], report: Report) -> list[str]:
    """Make every forbidden API of ``hints`` (canonical name -> hint) call ``report``
    instead, for good; then install the audit hook. Returns what was done, for the log."""
    done: list[str] = []
    keep: list[Any] = []  # what must stay alive: held by the audit hook, reachable from nowhere else
    library = torch._C._dispatch_library("IMPL", "aten", "", "torchdrill-armor", 0)
    keep.append(library)
    for name, hint in sorted(hints.items()):
        refuse = _refusal(name, hint, report)
        for op in _operators(kernels_of(name)):
            for key in _KEYS:
                if torch._C._dispatch_has_kernel_for_dispatch_key(op, key):
                    with warnings.catch_warnings():  # "overriding a registered kernel": that is the point
                        warnings.simplefilter("ignore", UserWarning)
                        library.impl(op[6:], key, refuse)
                    done.append(f"{op} [{key}]")
        done += _rebind(name, refuse)
    _audit(keep)
    return done


def _refusal(name: str, hint: str, report: Report) -> Callable[..., Any]:
    def refused(*args: Any, **kwargs: Any) -> Any:
        report(name, hint)
        raise RuntimeError(f"{name} is forbidden in this drill")  # only if report returned
    refused.__name__ = refused.__qualname__ = name.rpartition(".")[2]
    return refused


def _rebind(name: str, refuse: Callable[..., Any]) -> list[str]:
    """Replace the Python object behind ``name`` wherever Python code finds it."""
    try:
        obj = resolve(name)
    except (ValueError, AttributeError, ImportError):
        return []
    done = []
    if isinstance(obj, type):
        for attr, value in list(vars(obj).items()):
            if attr in ("__new__", "__init__", "__call__", "forward", "__iter__", "__len__") \
                    or (isinstance(value, types.FunctionType) and not attr.startswith("__")):
                try:
                    setattr(obj, attr, _method(refuse))
                    done.append(f"{name}.{attr}")
                except (TypeError, AttributeError):
                    pass
        return done
    if isinstance(obj, types.FunctionType):
        obj.__code__ = _code_for(obj, refuse)
        obj.__defaults__ = None
        obj.__kwdefaults__ = {**(obj.__kwdefaults__ or {}), "_refuse": refuse}
        done.append(f"{name} (code)")
    module_name, _, attr = name.rpartition(".")
    owner: Any = None
    try:
        owner = resolve(module_name)
    except (ValueError, AttributeError, ImportError):
        owner = None
    for place in {id(p): p for p in (owner, _home(obj)) if p is not None}.values():
        try:
            if getattr(place, attr, None) is obj:
                setattr(place, attr, refuse if not isinstance(place, type) else _method(refuse))
                done.append(f"{getattr(place, '__name__', place)}.{attr}")
        except (TypeError, AttributeError):
            pass
    return done


def _home(obj: Any) -> Any:
    module = getattr(obj, "__module__", None)
    try:
        return importlib.import_module(module) if isinstance(module, str) else None
    except ImportError:
        return None


def _method(refuse: Callable[..., Any]) -> Any:
    def refused(*args: Any, **kwargs: Any) -> Any:
        return refuse(*args, **kwargs)
    return refused


def _code_for(fn: types.FunctionType, refuse: Callable[..., Any]) -> types.CodeType:
    """A code object that calls ``refuse`` (found in the function's keyword defaults)
    with the same free variables as ``fn``, so it can replace ``fn.__code__``."""
    free = fn.__code__.co_freevars
    source = (f"def _outer({', '.join(free) or '_'}):\n"
              f"    def _refused(*args, _refuse=None, **kwargs):\n"
              + (f"        ({', '.join(free)},)\n" if free else "")
              + "        return _refuse(*args, **kwargs)\n"
              "    return _refused\n")
    namespace: dict[str, Any] = {}
    exec(compile(source, "<torchdrill armor>", "exec"), namespace)
    inner = namespace["_outer"](*([None] * max(len(free), 1))).__code__
    return inner.replace(co_name=fn.__code__.co_name, co_qualname=fn.__code__.co_qualname)


# gc's walks find any object (the armor's kernels among them); ctypes reads and writes memory
# by address. Foreign calls through ctypes are refused too where no GPU stack needs them.
_REFUSED_EVENTS = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents",
                             "ctypes.addressof", "ctypes.cdata", "ctypes.cdata/buffer",
                             "ctypes.string_at", "ctypes.wstring_at"})


def _audit(keep: list[Any]) -> None:
    """An audit hook that refuses what would reach or rewrite the armor (it holds
    ``keep`` alive: the dispatcher library, which nothing else refers to)."""
    held = tuple(keep)
    refused = _REFUSED_EVENTS | ({"ctypes.call_function"} if not torch.cuda.is_available() else set())

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event in refused:
            raise PermissionError(f"{event} is not available to a submission "
                                  f"({len(held)} guard(s) stay out of reach)")
        if event == "object.__setattr__" and len(args) > 1 and args[1] == "__code__":
            raise PermissionError("replacing a function's code is not available to a submission")
        if event == "open" and args and isinstance(args[0], (str, bytes)) \
                and os.fsdecode(args[0]).rstrip("/").endswith("/mem") \
                and "/proc/" in os.fsdecode(args[0]):
            raise PermissionError("a process's memory file is not available to a submission")

    sys.addaudithook(hook)
