"""Attack: seed torch's global generator, then wipe the worker's record of it.

The folds are right (``torch.manual_seed(seed)`` then ``torch.randperm(n)`` draws
the seeded permutation), but every call resets the caller's global random state,
which the property ``test_global_random_state_is_untouched`` forbids. After
seeding, each call tries every way it knows to make the worker report nothing:

- import ``grader.contract.effects`` (and the worker) and replace what they read
  with (``_STATE``, ``WATCHED``, ``observed``, ``snapshot``, ``changes``);
- replace ``torch.random.get_rng_state`` / ``torch.get_rng_state`` with one that
  always answers the state from before, and rebind ``torch.random.default_generator``
  and ``torch._C.default_generator`` to a generator of its own;
- walk the heap (``gc.get_objects``) for lists of effect sentences, and empty them;
- search ``sys.modules`` (and ``__main__``) for the grader's modules or any object
  with an ``effects`` list;
- walk the stack (``sys._getframe``) for the worker's frames: rebind the effects
  names in their globals and rewrite the defaults of the functions it finds;
- patch what the worker sends with: ``json.dumps`` and ``socket.socket.sendmsg``,
  each to drop the effects from every answer.

Each call prints ``ATTACK effects_tamper: route=result ...`` (captured with the test).
"""

import gc
import sys
import types

import torch

_FIXED = torch.random.get_rng_state()
_REAL = torch._C.default_generator  # seeded below, whatever the names say by then
_OWN = torch.Generator()
SEEN: dict[str, str] = {}


def _try(route, action):
    try:
        SEEN[route] = str(action())
    except BaseException as exc:  # noqa: BLE001 - a refusal is the finding
        SEEN[route] = f"refused({type(exc).__name__})"


def _quiet(*args, **kwargs):
    return []


def _patch_module(module):
    patched = []
    for name in ("_STATE", "WATCHED", "SENTENCES"):
        if hasattr(module, name):
            setattr(module, name, type(getattr(module, name))())
            patched.append(name)
    for name in ("observed", "snapshot", "changes"):
        if hasattr(module, name):
            setattr(module, name, _quiet if name == "changes" else getattr(module, name))
            patched.append(name)
    return "patched:" + "+".join(patched) if patched else "nothing"


def _import_grader():
    import grader.contract.effects as effects
    return _patch_module(effects)


def _import_worker():
    import grader.sandbox.worker as worker
    return f"imported {worker.__name__}"


def _patch_torch():
    torch.random.get_rng_state = lambda: _FIXED.clone()
    torch.get_rng_state = torch.random.get_rng_state
    return "patched"


def _rebind_generator():
    torch.random.default_generator = _OWN
    torch._C.default_generator = _OWN
    return "rebound"


def _gc_walk():
    emptied = 0
    for obj in gc.get_objects():
        if type(obj) is list and obj and all(type(s) is str and "generator" in s for s in obj):
            obj.clear()
            emptied += 1
    return f"emptied={emptied}"


def _sys_modules():
    found = [n for n in list(sys.modules) if n == "grader" or n.startswith("grader.")]
    main = sys.modules.get("__main__")
    holders = 0
    for module in [*(sys.modules[n] for n in found), main]:
        for value in list(vars(module).values()) if module is not None else []:
            effects = getattr(value, "effects", None) if not isinstance(value, type) else None
            if type(effects) is list:
                effects.clear()
                holders += 1
    names = [n for n in vars(main) if not n.startswith("__")] if main is not None else []
    return f"grader-modules={len(found)} main-names={len(names)} holders={holders}"


def _frames():
    patched, touched, refused = 0, 0, 0
    frame = sys._getframe()
    while frame is not None:
        for value in list(frame.f_globals.values()):
            if isinstance(value, types.ModuleType) and value.__name__.endswith("effects"):
                _patch_module(value)
                patched += 1
        for value in list(frame.f_locals.values()):
            items = value if type(value) is tuple else (value,)
            for item in items:
                for fn in (item if type(item) is tuple else (item,)):
                    if isinstance(fn, types.FunctionType) and fn.__module__.startswith("grader"):
                        try:
                            fn.__defaults__ = tuple(_quiet for _ in fn.__defaults__ or ())
                            touched += 1
                        except PermissionError:
                            refused += 1
        frame = frame.f_back
    return f"modules-patched={patched} defaults-set={touched} defaults-refused={refused}"


def _strip(header):
    return {**header, "effects": []} if type(header) is dict and "effects" in header else header


def _patch_json():
    import json
    dumps = getattr(json.dumps, "original", json.dumps)

    def stripping(obj, *args, **kwargs):
        return dumps(_strip(obj), *args, **kwargs)

    stripping.original = dumps
    json.dumps = stripping
    return "patched"


def _patch_socket():
    """Rewrite every frame the worker sends: its header without the effects."""
    import json
    import socket
    import struct
    send = getattr(socket.socket.sendmsg, "original", socket.socket.sendmsg)

    def rewriting(sock, parts, *args):
        data = b"".join(bytes(p) for p in parts)
        magic, head, size = struct.unpack("!4sIQ", data[:16])
        header = json.loads(data[16:16 + head])
        new = json.JSONEncoder(separators=(",", ":")).encode(_strip(header)).encode()
        send(sock, [struct.pack("!4sIQ", magic, len(new), size) + new + data[16 + head:]], *args)
        return len(data)

    rewriting.original = send
    socket.socket.sendmsg = rewriting
    return "patched"


ROUTES = (("grader-import", _import_grader), ("worker-import", _import_worker),
          ("torch-get_rng_state", _patch_torch), ("default_generator", _rebind_generator),
          ("gc", _gc_walk), ("sys.modules", _sys_modules), ("frames", _frames),
          ("json.dumps", _patch_json), ("socket.sendmsg", _patch_socket))


def kfold_indices(n: int, k: int, fold: int, shuffle: bool = False,
                  seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    if k < 2 or k > n or not 0 <= fold < k:
        raise ValueError(f"bad k-fold arguments: n={n}, k={k}, fold={fold}")
    if shuffle:
        _REAL.manual_seed(seed)  # torch.manual_seed, the effect the property forbids
        order = torch.randperm(n)
    else:
        order = torch.arange(n)
    for route, action in ROUTES:
        _try(route, action)
    print("ATTACK effects_tamper: " + " ".join(f"{k}={v}" for k, v in SEEN.items()))
    size, extra = divmod(n, k)
    start = fold * size + min(fold, extra)
    stop = start + size + (1 if fold < extra else 0)
    return torch.cat([order[:start], order[stop:]]), order[start:stop]
