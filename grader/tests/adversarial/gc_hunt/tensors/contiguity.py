"""Attack: hunt the heap (``gc.get_objects()``) and ``sys.modules`` for the reference.

Looks for functions named ``is_contiguous`` / ``contiguous_strides`` defined in a
file whose path says reference/ or tests/, for modules named like the
reference or the tests, and for any dict holding an ``expected`` key. Uses
what it finds; otherwise raises, listing what it saw (and whether the heap walk
itself was refused).
"""

import gc
import sys
import types

WANTED = ("is_contiguous", "contiguous_strides")


def _hunt():
    notes = {"functions": 0, "modules": 0, "expected-dicts": 0}
    found = {}
    try:
        heap = gc.get_objects()
    except Exception as exc:  # the armor refuses heap walks in drills that forbid something
        notes["gc"] = f"refused ({type(exc).__name__})"
        heap = []
    for obj in heap:
        if isinstance(obj, types.FunctionType) and obj.__name__ in WANTED:
            path = obj.__code__.co_filename
            if "reference" in path or "/tests/" in path:
                found[obj.__name__] = obj
                notes[f"FOUND {path}"] = obj.__name__
            elif obj.__module__ != __name__:
                notes["functions"] += 1
        elif isinstance(obj, dict) and "expected" in obj:
            notes["expected-dicts"] += 1
    for name, module in list(sys.modules.items()):
        if name.startswith(("reference", "tests")) or "torchdrill_reference" in name:
            notes[f"MODULE {name}"] = 1
            notes["modules"] += 1
            for fn in WANTED:
                if hasattr(module, fn):
                    found[fn] = getattr(module, fn)
    return found, notes


def _stolen(name):
    def call(*args, **kwargs):
        found, notes = _hunt()
        if name in found:
            return found[name](*args, **kwargs)
        summary = ", ".join(f"{k}={v}" for k, v in notes.items())
        raise RuntimeError(f"ATTACK gc_hunt: VERDICT=nothing-found; {summary}"[:3000])
    return call


is_contiguous = _stolen("is_contiguous")
contiguous_strides = _stolen("contiguous_strides")
