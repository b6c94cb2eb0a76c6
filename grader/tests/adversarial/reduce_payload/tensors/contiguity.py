"""Attack: answers that run code wherever they are unpickled, copied or shown.

The returned objects' ``__reduce__`` (pickle), ``__deepcopy__``, ``__repr__``,
``__str__``, ``__format__``, ``__len__``, ``__iter__`` and ``__del__`` each
create a canary file in /tmp and in the course folder (paths templated in at
test time). In the worker that is its own private tmp or refused; a grader
that unpickled, copied or printed the object on its side would leave a canary
the test finds.
"""

import os

REPO = "@@REPO@@"
CANARY = "@@CANARY@@"


def _touch(why):
    for folder in ("/tmp", REPO):
        try:
            with open(os.path.join(folder, f"{CANARY}-{why}.txt"), "w") as f:
                f.write(why)
        except BaseException:  # noqa: BLE001
            pass
    return why


class Payload(int):
    """An int subclass (so a lax ``isinstance(x, int)`` check lets it through)."""

    def __reduce__(self):
        return (os.system, (f"touch /tmp/{CANARY}-unpickled.txt",))

    def __deepcopy__(self, memo):
        _touch("deepcopy")
        return self

    def __repr__(self):
        return _touch("repr")

    def __str__(self):
        return _touch("str")

    def __format__(self, spec):
        return _touch("format")

    def __len__(self):
        _touch("len")
        return 0

    def __iter__(self):
        _touch("iter")
        return iter(())

    def __del__(self):
        _touch("del")


class Truthy(Payload):
    def __bool__(self):
        _touch("bool")
        return True


def is_contiguous(size, stride):
    return Truthy(1)


def contiguous_strides(size):
    return tuple(Payload(1) for _ in size)
