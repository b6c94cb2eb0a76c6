"""Attack: leave a tree the grader must clean up: 3000 nested folders, 2000 files at the
bottom, made (once per worker) wherever the worker may write, through relative
``chdir`` steps (deeper than PATH_MAX). Then raises, saying what it built; a clean-up
that recursed, followed links or gave up on long paths would crash the grader or
leave the tree (the test looks for the canary in its name).
"""

import os
import tempfile

DEPTH, FILES = 3000, 2000
NAME = "@@CANARY@@-deep"
_built = []


def _writable():
    for folder in (os.getcwd(), os.environ.get("TMPDIR"), tempfile.gettempdir(), "/tmp"):
        if folder and os.access(folder, os.W_OK | os.X_OK):
            return folder
    return None


def _build():
    start = os.getcwd()
    folder = _writable()
    if folder is None:
        return "nowhere-writable"
    try:
        os.chdir(folder)
        depth = files = 0
        for _ in range(DEPTH):
            os.mkdir(NAME)
            os.chdir(NAME)
            depth += 1
        for i in range(FILES):
            with open(f"f{i}", "w") as f:
                f.write("x")
            files += 1
        return f"DEPTH={depth} FILES={files} in {folder}"
    except OSError as exc:
        return f"stopped at depth {depth}, {files} files: {type(exc).__name__} {exc.errno}"
    finally:
        os.chdir(start)


def _attack():
    if not _built:
        _built.append(_build())
    raise RuntimeError(f"ATTACK deep_tree: {_built[0]}")


def pad_sequences(seqs, padding_value=0.0, batch_first=True):
    _attack()


def pad_one_hot(sequence, target_length):
    _attack()
