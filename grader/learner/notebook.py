"""``check`` from inside a Jupyter or Colab notebook: grade the drill whose functions
the notebook defines, and print what ``torchdrill check`` prints.

The functions live in the kernel, not in files. ``check`` reads the cells this
session has run (IPython's ``In``, in the order they ran) exactly as the graders
read a handed-in notebook (``grader.intake.notebooks``: imports, definitions and
constants; the last definition of each function counts), writes the drill's file
to a temporary folder, and grades it in this process with the quick profile, as
``torchdrill check`` grades a file (``grader.learner.check.run_check``): the
forbidden-API guard, the explanation of every failure, the learner's own
``print`` and traceback. Cell ``N`` in a message is ``In [N]``. Where the runtime
has a GPU (Colab's GPU runtime, say) the drill's ``cuda`` properties run too;
elsewhere they are "not run here". Outside IPython, the drill's functions are
taken from ``__main__`` instead.

This is the learner's own code in the learner's own kernel: nothing is sandboxed,
as with ``torchdrill check``. The official grade comes from the instructor's
grader (``grade-all``, the Gradescope autograder), which reads the notebook
without running it.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from grader.core import i18n, syllabus
from grader.core.i18n import N_, _
from grader.core.outcomes import NOT_ATTEMPTED, NOT_RUN, PASSED
from grader.core.syllabus import Course
from grader.intake import notebooks
from grader.learner.check import print_check, run_check
from grader.learner.place import Place

COURSE_ENV = "TORCHDRILL_COURSE"
HANDOUT_FOLDER = "torchdrill-handout"  # where a notebook's set-up cell puts a downloaded handout

SHIM = '''"""{drill} as the notebook defines it: its functions, taken from the kernel's namespace."""
import __main__ as _notebook


def _stub(name):
    def stub(*args, **kwargs):
        raise NotImplementedError(f"{{name}}() is not defined in the notebook yet: run its cell")
    stub.__name__ = stub.__qualname__ = name
    return stub


'''


def find_course(start: Path | None = None) -> Path:
    """The handout: ``$TORCHDRILL_COURSE``, else the nearest folder at or above the
    current one with ``course.toml`` and ``tests/``, else ``./torchdrill-handout``."""
    given = os.environ.get(COURSE_ENV)
    if given:
        return Path(given).resolve()
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents, here / HANDOUT_FOLDER):
        if (folder / "course.toml").is_file() and (folder / "tests" / "conftest.py").is_file():
            return folder
    raise FileNotFoundError(_("no torchdrill handout at {here} or above, nor in ./{folder}: run the "
                              "notebook's set-up cell first (or set TORCHDRILL_COURSE)",
                              here=here, folder=HANDOUT_FOLDER))


@dataclass(frozen=True)
class _NotebookPlace(Place):
    """Where ``print_check`` says the learner's code is: the notebook's cell."""

    def exercise_file(self, drill_id: str) -> Path:
        return Path(_("the code cell of {drill} in this notebook", drill=drill_id))

    def shown_path(self, path: Path) -> str:
        return str(path)


SESSION = "this session"


def session_cells() -> list[str] | None:
    """The sources of the cells this IPython session has run (``In``; ``In[0]`` is
    empty, so cell N is ``In [N]``), or None outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    history = getattr(shell, "user_ns", {}).get("In") if shell is not None else None
    return [str(cell) for cell in history] if isinstance(history, list) else None


def write_from_cells(root: Path, drill_id: str, cells: list[str], folder: Path) -> Path:
    """``folder/<drill>.py`` read from ``cells`` as the graders read a notebook (the
    stub itself when no cell defines any of the drill's functions)."""
    stubs = notebooks.drill_functions(root, [drill_id])
    data = notebooks.dumps_cells([("code", cell) for cell in cells]).encode("utf-8")
    extraction = notebooks.extract(SESSION, data, stubs)
    path = folder / f"{drill_id}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    source = extraction.files.get(f"{drill_id}.py")
    if source is None:
        source = (root / "exercises" / f"{drill_id}.py").read_bytes()
    path.write_bytes(source)
    return path


def write_shim(root: Path, drill_id: str, folder: Path) -> Path:
    """``folder/<drill>.py``: the drill's functions as ``__main__`` has them now."""
    stub = notebooks.drill_functions(root, [drill_id]).get(drill_id)
    names = list(stub.functions) if stub else []
    lines = [SHIM.format(drill=drill_id)]
    for name in names:
        lines.append(f"{name} = getattr(_notebook, {name!r}, None) or _stub({name!r})\n")
    path = folder / f"{drill_id}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines), encoding="utf-8")
    return path


def check(name: str, course: str | Path | None = None, lang: str | None = None) -> bool:
    """Grade one drill as the notebook defines it now; print every failing property
    with its smallest input, expected vs got and the traceback. True when it is done.
    ``lang`` (``"zh_CN"``, ``"en"``) is what ``--lang`` is to a command."""
    root = Path(course).resolve() if course else find_course()
    loaded: Course = syllabus.load(root)
    # The notebook's language, chosen as every command's: lang, else $TORCHDRILL_LANG,
    # else the handout's, else the locale.
    with i18n.speaking(i18n.choose(lang, loaded.language)):
        return _check(root, loaded, name)


# A drill's status in the line under a notebook's check ("not done yet (partial)").
NOTEBOOK_STATUS = {"partial": N_("partial"), "failed": N_("failed"), "error": N_("error"),
                   NOT_ATTEMPTED: N_("not attempted"), NOT_RUN: N_("not run")}


def _check(root: Path, loaded: Course, name: str) -> bool:
    drill_id = loaded.resolve(name)
    # Plain text with ANSI colours on stdout: Jupyter and Colab show it as the cell's output
    # (rich's own Jupyter mode would make one HTML block per line).
    console = Console(file=sys.stdout, force_jupyter=False, force_terminal=True, color_system="standard",
                      width=100, emoji=False)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="torchdrill-notebook-check-") as tmp:
        folder = Path(tmp) / "exercises"
        cells = session_cells()
        if cells is not None:
            write_from_cells(root, drill_id, cells, folder)
        else:
            write_shim(root, drill_id, folder)
        results = run_check(root, drill_id, folder)
        elapsed = time.perf_counter() - started
        where = _NotebookPlace(root, loaded, folder, Path(tmp) / "results.json")
        row = next(ex for ex in results["exercises"] if ex["id"] == drill_id)
        print_check(where, row, console, elapsed)
    done = row["status"] == PASSED
    console.print()
    status = row["status"]
    console.print(_("{drill}: done", drill=drill_id) if done else
                  _("{drill}: not done yet ({status}); fix the cell above and run this one again", drill=drill_id,
                    status=_(NOTEBOOK_STATUS[status]) if status in NOTEBOOK_STATUS else status.replace("_", " ")))
    return done
