"""Attack: patch pytest, hypothesis and the test module through sys.modules.

At import it tries to import the drill's test module (``tests.tensors.test_one_hot``)
and ``grader.grading.verdict``, replaces every ``test_*`` function with a no-op, makes
``pytest.fail`` / ``pytest.raises`` harmless, turns ``hypothesis.given`` into a
decorator that never calls the test, and plants fake modules in ``sys.modules``.
Then ``one_hot`` returns float zeros with one column too many (wrong even for empty labels). What it managed is printed (stdout is captured).
"""

import sys
import types

import torch

report = []


def _noop(*args, **kwargs):
    return None


def _try(what, fn):
    try:
        fn()
        report.append(f"{what}=done")
    except BaseException as exc:  # noqa: BLE001
        report.append(f"{what}=refused({type(exc).__name__})")


def _patch_tests():
    import importlib

    module = importlib.import_module("tests.tensors.test_one_hot")
    for name in dir(module):
        if name.startswith("test_"):
            setattr(module, name, _noop)


def _patch_pytest():
    import pytest

    pytest.fail = _noop
    pytest.raises = lambda *a, **k: types.SimpleNamespace(__enter__=_noop, __exit__=lambda *a: True)


def _patch_hypothesis():
    import hypothesis

    hypothesis.given = lambda *a, **k: (lambda f: _noop)


def _patch_plugin():
    import grader.grading.verdict as verdict

    verdict.classify = lambda exc: ("passed", "")


def _plant():
    fake = types.ModuleType("tests.tensors.test_one_hot")
    fake.__dict__.update({"test_matches_f_one_hot_given_classes": _noop})
    sys.modules["tests"] = types.ModuleType("tests")
    sys.modules["tests.tensors"] = types.ModuleType("tests.tensors")
    sys.modules["tests.tensors.test_one_hot"] = fake
    sys.modules["reference"] = types.ModuleType("reference")


_try("tests-import", _patch_tests)
_try("pytest", _patch_pytest)
_try("hypothesis", _patch_hypothesis)
_try("plugin", _patch_plugin)
_try("plant", _plant)
print("ATTACK patch_pytest: " + " ".join(report))


def one_hot(labels, num_classes=-1):
    print("ATTACK patch_pytest: " + " ".join(report))
    if num_classes == -1:
        num_classes = int(labels.max()) + 1 if labels.numel() else 1
    return torch.zeros(*labels.shape, num_classes + 1, dtype=torch.float32)
