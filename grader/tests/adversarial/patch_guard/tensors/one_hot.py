"""Attack: disarm the grader's guard from inside, at import, then use the forbidden API.

Replaces ``grader.contract.forbid.Forbidden.guard`` (and ``ForbiddenUse``) with
do-nothing stand-ins, and ``sys.setprofile``/``threading.setprofile`` with no-ops,
before the first call; then answers with ``F.one_hot``.
"""

import contextlib
import sys
import threading

import torch
import torch.nn.functional as F

try:
    import grader.contract.forbid as _forbid

    _forbid.Forbidden.guard = lambda self, *a, **k: contextlib.nullcontext([])
    _forbid.ForbiddenUse = type("ForbiddenUse", (Exception,), {})
except Exception:  # noqa: BLE001 - the grader package may not be importable here
    pass
sys.setprofile = threading.setprofile = lambda *a, **k: None


def one_hot(labels, num_classes=-1):
    if labels.dtype.is_floating_point or labels.dtype == torch.bool:
        raise ValueError("one_hot needs integer labels")
    return F.one_hot(labels.long(), num_classes)
