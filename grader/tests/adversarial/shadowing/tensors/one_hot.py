"""Attack: shadow files beside the submission's modules.

The submission's root, tensors/ and losses/ folders hold ``torch.py``,
``pytest.py``, ``sitecustomize.py``, ``usercustomize.py`` and ``conftest.py``;
each one records itself and raises if it is ever imported (by the worker's
start-up, by ``import torch`` here, or by the grader's pytest). This module
imports torch and reports which torch it got and which shadows ran; it scores 0
by raising that report.
"""

import builtins
import sys

import torch


def one_hot(labels, num_classes=-1):
    shadows = getattr(builtins, "_torchdrill_shadows", [])
    real = hasattr(torch, "Tensor") and hasattr(torch, "zeros")
    modules = {name: str(getattr(sys.modules.get(name), "__file__", None))
               for name in ("torch", "pytest", "sitecustomize", "usercustomize", "conftest")}
    raise RuntimeError(f"ATTACK shadowing: TORCH_REAL={real} SHADOWS_IMPORTED={len(shadows)} "
                       f"shadows={shadows} modules={modules}")
