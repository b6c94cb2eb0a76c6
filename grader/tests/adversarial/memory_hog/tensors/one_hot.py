"""Attack: allocate 20 GiB, as a tensor and as a bytearray.

``torch.empty(20 GiB, uint8)`` and ``bytearray(20 GiB)`` (which writes every
byte). The bytearray is only tried when some memory limit (RLIMIT_DATA or
RLIMIT_AS) is below 20 GiB: without one it would really fill the machine's
memory, so it reports "no-limit" instead. Raises with what each allocation did.
"""

import resource

import torch

SIZE = 20 * 2**30


def _limited():
    for name in ("RLIMIT_DATA", "RLIMIT_AS"):
        soft, _ = resource.getrlimit(getattr(resource, name))
        if soft != resource.RLIM_INFINITY and soft < SIZE:
            return True
    return False


def one_hot(labels, num_classes=-1):
    notes = []
    try:
        block = torch.empty(SIZE, dtype=torch.uint8)
        notes.append(f"torch.empty=ALLOCATED({block.numel()})")
        del block
    except BaseException as exc:  # noqa: BLE001
        notes.append(f"torch.empty=refused({type(exc).__name__})")
    if _limited():
        try:
            block = bytearray(SIZE)
            notes.append(f"bytearray=ALLOCATED({len(block)})")
            del block
        except BaseException as exc:  # noqa: BLE001
            notes.append(f"bytearray=refused({type(exc).__name__})")
    else:
        notes.append("bytearray=no-limit(not tried)")
    raise RuntimeError("ATTACK memory_hog: " + " ".join(notes))
