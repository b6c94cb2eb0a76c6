"""Attack: copy another student's one_hot from the same batch.

The test puts a correct ``other_student/tensors/one_hot.py`` beside this
submission. This file looks for it relative to its own location
(``../other_student``, ``../../other_student``), at the absolute paths templated
in at test time, relative to cwd, through every ``/proc/<pid>/cwd`` and
``/proc/<pid>/root``, and beside any submission folder named in a
``/proc/<pid>/cmdline``. If it can read one, it execs it and uses it (full
marks); otherwise it raises with what happened.
"""

import glob
import os

OTHER = "@@OTHER@@"
SUBMISSION = "@@SUBMISSION@@"
REL = os.path.join("tensors", "one_hot.py")
seen = {}


def _candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    roots = [OTHER, os.path.join(os.path.dirname(SUBMISSION), "other_student")]
    for up in (1, 2, 3):
        base = os.path.abspath(os.path.join(here, *[".."] * up))
        roots.append(os.path.join(base, "other_student"))
    roots.append(os.path.join(os.getcwd(), "..", "other_student"))
    for proc in glob.glob("/proc/[0-9]*"):
        roots += [os.path.join(proc, "cwd", "other_student"),
                  os.path.join(proc, "root") + OTHER]
        try:
            with open(os.path.join(proc, "cmdline"), "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        for arg in argv:
            text = arg.decode(errors="replace")
            if text.startswith("/") and "submission" in text:
                roots.append(os.path.join(os.path.dirname(text), "other_student"))
    return list(dict.fromkeys(roots))


def _steal():
    for root in _candidates():
        path = os.path.join(root, REL)
        try:
            with open(path) as f:
                source = f.read()
        except OSError as exc:
            key = type(exc).__name__
            seen[key] = seen.get(key, 0) + 1
            if root == OTHER:
                seen["absolute"] = key
            continue
        seen[f"READ {path}"] = len(source)
        namespace = {"__name__": "stolen"}
        exec(compile(source, path, "exec"), namespace)
        return namespace["one_hot"]
    return None


def one_hot(labels, num_classes=-1):
    stolen = _steal()
    if stolen is None:
        summary = " ".join(f"{k}={v}" for k, v in seen.items())
        raise RuntimeError(f"ATTACK other_student: VERDICT=nothing-read; {summary}"[:3000])
    return stolen(labels, num_classes)
