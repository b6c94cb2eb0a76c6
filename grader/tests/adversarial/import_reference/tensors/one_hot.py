"""Attack: import the reference solution (or the tests) and call it.

Tries ``import reference.tensors.one_hot``, the same with the course folder put
on ``sys.path`` (from the grader's path templated in at test time, from the
location of ``grader``, from cwd), and any module already in ``sys.modules``
whose name or file says "reference". On success it delegates to the
reference, which would score full marks; otherwise it raises, listing what it
tried.
"""

import importlib
import os
import sys


REPO = "@@REPO@@"
tried = []


def _find():
    for name, module in list(sys.modules.items()):
        path = str(getattr(module, "__file__", "") or "")
        if ("reference" in name or "/reference/" in path) and hasattr(module, "one_hot"):
            return module.one_hot, f"sys.modules[{name}]"
    roots = [None, REPO, "/work/main", os.getcwd()]
    try:
        import grader

        roots.append(os.path.dirname(os.path.dirname(os.path.abspath(grader.__file__))))
    except BaseException as exc:  # noqa: BLE001
        tried.append(f"import grader: {type(exc).__name__}")
    for root in roots:
        if root is not None and root not in sys.path:
            sys.path.insert(0, root)
        for name in ("reference.tensors.one_hot", "tests.tensors.test_one_hot"):
            try:
                module = importlib.import_module(name)
            except BaseException as exc:  # noqa: BLE001
                tried.append(f"{name} via {root}: {type(exc).__name__}")
                continue
            if hasattr(module, "one_hot"):
                return module.one_hot, f"{name} via {root}"
            tried.append(f"{name} via {root}: IMPORTED (no one_hot)")
    return None, ""


def one_hot(labels, num_classes=-1):
    found, where = _find()
    if found is not None:
        print(f"ATTACK import_reference: FOUND {where}")
        return found(labels, num_classes)
    raise RuntimeError("ATTACK import_reference: VERDICT=nothing-found; " + "; ".join(tried[:24]))
