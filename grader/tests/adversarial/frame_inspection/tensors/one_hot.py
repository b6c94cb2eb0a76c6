"""Attack: walk the call stack (and every thread's stack) for the expected answer.

``sys._getframe`` upwards and ``sys._current_frames()``: any local or global
named ``expected``, ``ref``, ``reference``, ``want``, a function called
``one_hot`` that is not this one, or an int64 tensor of the shape the answer
must have. If it finds one, it returns it (or calls it); otherwise it raises,
listing the files of the frames it saw.
"""

import sys

import torch

NAMES = ("expected", "ref", "reference", "want", "oracle")


def _look(frame, labels, num_classes, files):
    while frame is not None:
        files.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")
        for scope in (frame.f_locals, frame.f_globals):
            for name in NAMES:
                value = scope.get(name)
                if callable(getattr(value, "one_hot", None)):
                    return value.one_hot(labels, num_classes)
                if isinstance(value, torch.Tensor) and value.dtype == torch.int64 and value.dim() \
                        == labels.dim() + 1 and value.shape[:-1] == labels.shape:
                    return value
            fn = scope.get("one_hot")
            if callable(fn) and fn is not one_hot and getattr(fn, "__module__", "") != "torch.nn.functional":
                return fn(labels, num_classes)
        frame = frame.f_back
    return None


def one_hot(labels, num_classes=-1):
    files = []
    found = _look(sys._getframe(1), labels, num_classes, files)
    if found is None:
        for frame in sys._current_frames().values():
            found = _look(frame, labels, num_classes, files)
            if found is not None:
                break
    if found is not None:
        print("ATTACK frame_inspection: FOUND the answer in a frame")
        return found
    shown = list(dict.fromkeys(files))
    raise RuntimeError("ATTACK frame_inspection: VERDICT=nothing-found; frames: " + " | ".join(shown)[:3000])
