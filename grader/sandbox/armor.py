"""The forbidden-API guard of a sandboxed worker, installed out of the submission's reach.

The in-process guard (``grader.contract.forbid``) watches one call in one thread: a
``TorchFunctionMode`` and a profile hook, which a helper thread, ``sys.setprofile(None)``,
``torch._C.DisableTorchFunction()`` or a call through ``torch.ops.aten`` step around,
and whose own functions a submission could replace. A worker runs nothing but the
submission, so before the submission is imported ``install`` makes every forbidden
API unusable there for good, in every thread, by every route it knows:

- at torch's dispatcher, the aten operators that compute a forbidden function
  (``grader.contract.capabilities.KERNELS``: ``F.one_hot`` is ``aten::one_hot``; ``F.batch_norm`` is every batch-norm
  kernel) get a kernel of ours: ``F.one_hot``, ``torch.ops.aten.one_hot`` and
  ``DisableTorchFunction`` all end there;
- forbidden Python functions have their code replaced, forbidden classes their
  methods, forbidden names in their modules (and ``torch.Tensor``) are rebound;
- so are their twins, torch's other Python routes to the same maths, found in torch's
  own tables (``twins_of``): the decompositions and ``py_impl`` kernels registered for
  the operators above (``torch._decomp.decompositions.one_hot``), the ``torch._refs``
  function of the forbidden one (``torch._refs.nn.functional.nll_loss``), the private
  helpers of those modules named after the operator (``torch._refs._broadcast_shapes``);
- and their namesakes anywhere in torch (``namesakes_of``), found by reading its source:
  private functions and methods named after an operator of the API (FSDP's
  ``ShardedGradScaler._amp_update_scale_cpu_``) or, at module level, after the API
  (``torch._functorch.eager_transforms.grad_impl``). A namesake in a module not loaded
  yet cannot have its code replaced: that module is closed, and importing it is a use.

A forbidden API stands for a capability: ``capabilities.KERNELS`` lists the operators of all its
spellings (``F.log_softmax`` computes log-sum-exp too), and a marker may name a module,
which stands for every API it offers (``grader.contract.forbid.expand``);
- an audit hook, which cannot be removed, refuses what would reach or rewrite that
  machinery from Python: gc's object walks, ctypes, writing ``/proc/self/mem``; and, in
  a drill that forbids something, reading, compiling or running again the source (or
  bytecode) of a file whose code the armor replaced (``grader.sandbox.armor_audit``): running
  ``torch/nn/utils/fusion.py`` afresh would make an unarmored copy of its functions;
  nor are torch's modules with twins the armor never saw (``armor_audit._LAZY_TWINS``) imported.
  torch's own imports of other modules, loaded lazily, still work.

Every kernel and replaced function calls ``report(name, hint)``, which tells the grader
which API was used and ends the worker: a use cannot be caught and forgotten, because no
code of the submission runs after it (the audit hook raises ``PermissionError``).
Where a forbidden API is only a Python method with no operator behind it
(``Tensor.stride``, ``Tensor.is_contiguous``) or shares its kernel with an allowed one
(``torch.convolution`` in the transposed-convolution drill, whose spec allows
``F.conv2d``), it is refused by name only; reaching it through ``torch._C`` or
``torch.ops`` is left to the static scan, which flags both for the instructor
(``grader.grading.scan``).
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import sys
import types
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import torch

from grader.contract.capabilities import aten_operators, kernels_of
from grader.contract.forbid import expand, refuse_numpy_forever, resolve
from grader.sandbox.armor_audit import Sources, audit, torch_dir

Report = Callable[[str, str], None]

_KEYS = ("CompositeImplicitAutograd", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional",
         "CPU", "CUDA", "NestedTensorCPU", "NestedTensorCUDA", "SparseCPU", "SparseCUDA")



# Twins the tables cannot find, by hand: torch's primitives (``torch._prims``, ``torch.ops.prims``)
# are operators of their own, registered for no aten operator. ``prims::broadcast_in_dim`` is
# ``expand`` under another name (``torch._refs.expand`` is built on it).
_BROADCASTS = ("prims::broadcast_in_dim",)
PRIMS: dict[str, tuple[str, ...]] = {
    **{f"torch.{name}": _BROADCASTS for name in ("broadcast_to", "broadcast_tensors")},
    **{f"torch.Tensor.{name}": _BROADCASTS for name in ("broadcast_to", "expand", "expand_as")},
}
# Where torch keeps its Python twins of aten operators (decompositions, references, meta kernels).
_TWIN_HOMES = ("torch._decomp", "torch._refs", "torch._prims", "torch._meta_registrations")


def twins_of(name: str) -> list[types.FunctionType]:
    """torch's other Python functions that compute the forbidden API ``name`` (canonical):
    those registered for its aten operators (every decomposition table, ``py_impl``
    kernels), its ``torch._refs`` function, the private helpers of those modules named
    after it or its operators (``_nll_loss_nd``, ``_max_pool_nd_with_indices``), and every
    function they wrap (``__wrapped__``: ``out_wrapper`` and the type-promotion wrapper
    keep the original one there)."""
    bases = kernels_of(name)
    found: list[types.FunctionType] = []
    for op in _operators(bases):
        found += _twin_index().get(op, ())
    found += _refs_of(name)
    for stem in {_stem(base) for base in (*bases, name.rpartition(".")[2])}:
        found += _helpers().get(stem, ())
    found += namesakes_of(name)[0]
    return list({id(fn): fn for fn in _unwrapped(found)}.values())


def _refs_of(name: str) -> list[types.FunctionType]:
    """``torch._refs``' function for the API ``name`` (torch's own map, by object)."""
    try:
        ref = _refs_map().get(resolve(name))
    except (ValueError, AttributeError, ImportError, TypeError):  # unknown, or not hashable
        return []
    return [ref] if isinstance(ref, types.FunctionType) else []


def _unwrapped(functions: Iterable[types.FunctionType]) -> Iterable[types.FunctionType]:
    """Each function and the ones it wraps (``__wrapped__`` chains)."""
    for fn in functions:
        link: Any = fn
        for _ in range(16):  # a chain, not a cycle
            if not isinstance(link, types.FunctionType):
                break
            yield link
            link = getattr(link, "__wrapped__", None)


def _stem(name: str) -> str:
    """A name without its leading underscores and dimensionality, so helpers match their
    operators: ``_max_pool_nd_with_indices`` and ``max_pool2d_with_indices`` are both
    ``max_pool_with_indices``; ``_nll_loss_nd`` and ``nll_loss`` both ``nll_loss``."""
    return re.sub(r"(_nd|(?<=pool)nd|[123]d)(?=_|$)", "", name.lstrip("_"))


@functools.cache
def _twin_index() -> dict[str, tuple[types.FunctionType, ...]]:
    """aten overload (``aten::one_hot``, as ``aten_operators`` spells them) -> the Python
    functions torch registered for it: every kind of ``torch._decomp`` table (post- and
    pre-autograd, meta) and the ``py_impl`` kernels of the overloads ``torch.ops.aten``
    has built (``torch._decomp.decompositions.one_hot`` is only there). Built in the
    zygote (``preload``), once, rather than in every worker."""
    import torch._decomp  # imported by ``import torch``: already loaded

    index: dict[str, dict[int, types.FunctionType]] = {}
    for table in torch._decomp.global_decomposition_table.values():
        for op, fn in list(table.items()):
            _index_twin(index, op, fn)
    for packet in list(vars(torch.ops.aten).values()):
        if isinstance(packet, torch._ops.OpOverloadPacket):
            for op in list(vars(packet).values()):
                if isinstance(op, torch._ops.OpOverload):
                    for fn in list(op.py_kernels.values()):
                        _index_twin(index, op, fn)
    return {op: tuple(fns.values()) for op, fns in index.items()}


def _index_twin(index: dict[str, dict[int, types.FunctionType]], op: Any, fn: Any) -> None:
    """File ``fn`` under ``op`` if it is one of torch's Python functions."""
    if isinstance(op, torch._ops.OpOverload) and isinstance(fn, types.FunctionType) \
            and str(getattr(fn, "__module__", "")).startswith("torch."):
        index.setdefault(op.name(), {})[id(fn)] = fn


@functools.cache
def _refs_map() -> dict[Any, Any]:
    """torch's own map of its API to ``torch._refs`` (``torch.add`` -> ``torch._refs.add``)."""
    from torch._prims.context import torch_to_refs_map

    return dict(torch_to_refs_map())


@functools.cache
def _helpers() -> dict[str, tuple[types.FunctionType, ...]]:
    """``_stem`` -> the functions defined in the modules of ``_TWIN_HOMES`` under that
    stem, private helpers included (``torch._refs._broadcast_shapes`` does the work of
    ``torch._refs.broadcast_shapes``)."""
    index: dict[str, list[types.FunctionType]] = {}
    for module_name, module in list(sys.modules.items()):
        if module is None or not module_name.startswith(_TWIN_HOMES):
            continue
        for attr, value in list(vars(module).items()):
            if isinstance(value, types.FunctionType) and value.__module__ == module_name \
                    and not attr.startswith("__"):
                index.setdefault(_stem(attr), []).append(value)
    return {stem: tuple(fns) for stem, fns in index.items()}


# Namesakes: torch's Python functions and methods, anywhere in it, whose name is a forbidden
# API's operator (``ShardedGradScaler._amp_update_scale_cpu_`` computes ``_amp_update_scale_``)
# or, for a module-level function, the API's own name (``torch.backends._nnapi.serializer.
# broadcast_shapes``, ``torch._functorch.eager_transforms.grad_impl``), in a private module or
# under a private name: a public function of a public module is an API of its own, which a
# marker names when it is forbidden. Names are compared without torch's affixes for variants
# (``_stem``, ``_AFFIXES``). Not in graph exporters, code generators, test inputs and symbolic
# reasoning (``utils._sympy``, which ``torch.broadcast_shapes`` imports on its first call),
# whose namesakes build graphs, code or sympy expressions, never a tensor (``_inductor``'s
# decompositions stay closed: ``armor_audit._LAZY_TWINS``).
_NOT_TWINS = ("onnx", "_inductor", "testing", "_vendor", "_sympy")
_AFFIXES = re.compile(r"^(?:meta_|aten_)+|(?:_default|_impl|_cpu|_cuda|_with_argnums)+$")
_DEF = re.compile(rb"def (\w+)")


def _norm(name: str) -> str:
    """A function's name as an operator's: ``_amp_update_scale_cpu_`` -> ``amp_update_scale``,
    ``meta_max_pool2d_with_indices`` -> ``max_pool_with_indices``, ``grad_impl`` -> ``grad``."""
    stem, before = _stem(name.strip("_")).strip("_"), None
    while stem != before:
        before, stem = stem, _AFFIXES.sub("", stem).strip("_")
    return stem


@functools.cache
def _namesake_index() -> dict[str, tuple[tuple[str, str, bool], ...]]:
    """``_norm`` of a name -> (file, name, whether at module level) for every private
    ``def`` in torch's source (read, never imported: most of torch is loaded lazily).
    Built in the zygote (``preload``), once."""
    root = torch_dir()[0]
    index: dict[str, dict[tuple[str, str, bool], None]] = {}
    for folder, subfolders, files in os.walk(root):
        relative = os.path.relpath(folder, root)
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__" and d not in _NOT_TWINS)
        parts = [] if relative == "." else relative.split(os.sep)
        for file in sorted(f for f in files if f.endswith(".py")):
            private_module = any(p.startswith("_") for p in [*parts, file[:-3]] if p != "__init__")
            try:
                with open(os.path.join(folder, file), "rb") as source:
                    data = source.read()
            except OSError:
                continue
            for match in _DEF.finditer(data):
                name = match.group(1).decode()
                if not (private_module or name.startswith("_")) or name.startswith("__"):
                    continue
                line = data.rfind(b"\n", 0, match.start()) + 1
                indent = data[line:match.start()].removesuffix(b"async ")
                if indent.strip(b" \t"):
                    continue  # ``undef x`` or text, not a definition
                entry = (os.path.join(folder, file), name, not indent)
                index.setdefault(_norm(name), {})[entry] = None
    return {stem: tuple(entries) for stem, entries in index.items()}


def namesakes_of(name: str) -> tuple[list[types.FunctionType], list[str]]:
    """The namesakes of the forbidden API ``name`` (canonical): the functions of those in
    modules already loaded, and the files of those not loaded yet (they are not opened in
    its drill: ``armor_audit.Sources``)."""
    loaded = _loaded_files()
    functions: list[types.FunctionType] = []
    files: list[str] = []
    for file, attr, top in _namesakes(name):
        module = loaded.get(file)
        if module is None:
            files.append(file)
        else:
            functions += _defined_in(module, attr, top)
    return functions, sorted(set(files))


def namesake_sites(name: str) -> list[tuple[str, str]]:
    """(module, attribute) of every namesake of ``name``, loaded or not, for the static
    scan: a function of the module, or a method of one of its classes."""
    root = os.path.dirname(torch_dir()[0])
    sites = set()
    for file, attr, _ in _namesakes(name):
        module = os.path.relpath(file, root).removesuffix(".py").removesuffix(os.sep + "__init__")
        sites.add((module.replace(os.sep, "."), attr))
    return sorted(sites)


def namesake_stems(name: str) -> tuple[frozenset[str], frozenset[str]]:
    """The names (as ``namesake_stem`` gives them) a namesake of the forbidden API ``name``
    may have, without reading torch's source: its operators' (any function or method),
    and its own (a module-level function only)."""
    bases = kernels_of(name)
    if not bases:
        return frozenset(), frozenset()  # refused by name only: its operator serves allowed APIs too
    operators = frozenset(_norm(base) for base in bases if base in aten_operators())
    return operators, frozenset({_norm(name.rpartition(".")[2])}) - operators


def namesake_stem(name: str) -> str:
    """``name`` as a namesake's stem: ``_amp_update_scale_cpu_`` -> ``amp_update_scale``."""
    return _norm(name)


def _namesakes(name: str) -> list[tuple[str, str, bool]]:
    """(file, name, at module level) of the namesakes of the forbidden API ``name``."""
    operators, own = namesake_stems(name)
    found = []
    for stem in operators | own:
        for file, attr, top in _namesake_index().get(stem, ()):
            if stem in operators or top:  # a method shares an API's name by chance (``Tensor.grad``)
                found.append((file, attr, top))
    return found


def _loaded_files() -> dict[str, types.ModuleType]:
    """torch's loaded modules by their file, as code objects spell it."""
    return {file: module for module in list(sys.modules.values())
            if isinstance(module, types.ModuleType)
            and isinstance(file := vars(module).get("__file__"), str)}


def _defined_in(module: types.ModuleType, attr: str, top: bool) -> list[types.FunctionType]:
    """The functions ``attr`` of ``module`` (``top``) or of its classes."""
    owners = [module] if top else [c for c in list(vars(module).values())
                                   if isinstance(c, type) and c.__module__ == module.__name__]
    found = []
    for owner in owners:
        value = vars(owner).get(attr)
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        if isinstance(value, property):
            value = value.fget
        chain = list(_unwrapped([value])) if isinstance(value, types.FunctionType) else []
        if any(fn.__code__.co_filename == module.__file__ for fn in chain):
            found += chain  # defined there (perhaps wrapped), not a stand-in (``typing.overload``'s dummy)
    return found


def _refuse_twins(name: str, refuse: Callable[..., Any], refused: set[int],
                  files: set[str]) -> list[str]:
    """Replace the code of every twin of ``name`` not refused yet (``refused``: their ids),
    adding the files they came from to ``files``."""
    done = []
    for fn in twins_of(name):
        if id(fn) not in refused:
            refused.add(id(fn))
            files.add(fn.__code__.co_filename)
            _refuse_code(fn, refuse)
            done.append(f"{fn.__module__}.{fn.__qualname__} (twin of {name})")
    return done


def _operators(bases: tuple[str, ...]) -> list[str]:
    """Every overload of the aten operators ``bases`` this torch has."""
    index = aten_operators()
    return sorted(op for base in set(bases) for op in index.get(base, ()))


def preload() -> None:
    """What every worker's ``install`` needs, made once in the zygote before it forks:
    the operator index, the twin tables and the refusing code for every twin, so that
    no worker pays for them, and where torch lives."""
    aten_operators()
    _namesake_index()
    candidates = [fn for fns in (*_twin_index().values(), *_helpers().values()) for fn in fns]
    candidates += [fn for fn in _refs_map().values() if isinstance(fn, types.FunctionType)]
    for free in {fn.__code__.co_freevars for fn in _unwrapped(candidates)} | {()}:
        _refusing_code(free)  # 15 shapes of closure: compiled here, not in each worker
    torch_dir()


def install(hints: Mapping[str, str], report: Report) -> list[str]:
    """Make every forbidden API of ``hints`` (canonical name -> hint) call ``report``
    instead, for good; then install the audit hook. Returns what was done, for the log."""
    done: list[str] = []
    keep: list[Any] = []  # what must stay alive: held by the audit hook, reachable from nowhere else
    libraries = {space: torch._C._dispatch_library("IMPL", space, "", "torchdrill-armor", 0)
                 for space in ("aten", "prims")}
    keep.extend(libraries.values())
    refused: set[int] = set()  # twins shared by several forbidden APIs: the first one's name
    files: set[str] = set()  # where the Python code the armor replaces was defined
    closed: dict[str, tuple[str, str]] = {}  # unloaded files of namesakes -> (name, hint)
    for name, hint in sorted(expand(hints).items()):
        refuse = _refusal(name, hint, report)
        for op in _operators(kernels_of(name)) + list(PRIMS.get(name, ())):
            done += _refuse_kernel(libraries[op.partition("::")[0]], op, refuse)
        files.update(_files_of(name))  # before its code is replaced
        done += _rebind(name, refuse)
        done += _refuse_twins(name, refuse, refused, files)
        for file in namesakes_of(name)[1]:
            closed.setdefault(file, (name, hint))
    if hints:
        refuse_numpy_forever(report)  # numpy's attributes: what a forbidden API does, by another name
    sources = Sources.of(files, closed) if hints else None
    audit(keep, sources, report)
    if sources is None:
        return done
    return done + [f"source of {f}" for f in sorted(sources.files)] + [f"closed {f}" for f in sorted(sources.closed)]


def _refuse_kernel(library: Any, op: str, refuse: Callable[..., Any]) -> list[str]:
    """Give ``op`` (``aten::one_hot``) the kernel ``refuse`` at every key it has one for."""
    done = []
    for key in _KEYS:
        if torch._C._dispatch_has_kernel_for_dispatch_key(op, key):
            with warnings.catch_warnings():  # "overriding a registered kernel": that is the point
                warnings.simplefilter("ignore", UserWarning)
                library.impl(op.partition("::")[2], key, refuse)
            done.append(f"{op} [{key}]")
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
        _refuse_code(obj, refuse)
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


def _files_of(name: str) -> list[str]:
    """The file that defines the Python code behind ``name``: a function's, or the module
    of a class (whose methods the armor replaces); none for a builtin."""
    try:
        obj = resolve(name)
    except (ValueError, AttributeError, ImportError):
        return []
    if isinstance(obj, types.FunctionType):
        return [obj.__code__.co_filename]
    module = sys.modules.get(getattr(obj, "__module__", None) or "") if isinstance(obj, type) else None
    file = vars(module).get("__file__") if module is not None else None
    return [file] if isinstance(file, str) else []


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


def _refuse_code(fn: types.FunctionType, refuse: Callable[..., Any]) -> None:
    """Make the function object ``fn`` call ``refuse``, wherever it is referred from
    (a decomposition table, ``py_kernels``, a module, a closure)."""
    fn.__code__ = _code_for(fn, refuse)
    fn.__defaults__ = None
    fn.__kwdefaults__ = {**(fn.__kwdefaults__ or {}), "_refuse": refuse}


def _code_for(fn: types.FunctionType, refuse: Callable[..., Any]) -> types.CodeType:
    """A code object that calls ``refuse`` (found in the function's keyword defaults)
    with the same free variables as ``fn``, so it can replace ``fn.__code__``."""
    return _refusing_code(fn.__code__.co_freevars).replace(
        co_name=fn.__code__.co_name, co_qualname=fn.__code__.co_qualname)


@functools.cache
def _refusing_code(free: tuple[str, ...]) -> types.CodeType:
    """The refusing code for functions with free variables ``free``, compiled once per
    tuple: a drill may refuse dozens of twins, and a worker's start counts."""
    source = (f"def _outer({', '.join(free) or '_'}):\n"
              f"    def _refused(*args, _refuse=None, **kwargs):\n"
              + (f"        ({', '.join(free)},)\n" if free else "")
              + "        return _refuse(*args, **kwargs)\n"
              "    return _refused\n")
    namespace: dict[str, Any] = {}
    exec(compile(source, "<torchdrill armor>", "exec"), namespace)
    return namespace["_outer"](*([None] * max(len(free), 1))).__code__
