"""The handout as notebooks: ``torchdrill release OUT --notebooks`` writes one ``.ipynb``
per topic to ``OUT/notebooks/`` (nbformat v4).

Each notebook starts with a set-up cell that makes the handout importable: it looks
for the handout around the notebook (the release folder itself: Jupyter on the
learner's machine) or downloads it (``--handout-url``: a ``.zip`` or a git
repository the instructor publishes; Colab), then installs the grader and its pinned
test tools unless they are importable already. It never installs torch: a
notebook runtime brings its own (Colab's has CUDA). Then, for each drill of the
topic, in course order:

- a markdown cell: the drill's id and points, and its stub's module docstring;
- a code cell: the stub (imports and functions, each with its docstring and
  ``raise NotImplementedError``): the learner writes the answer there;
- a code cell ``check("<drill id>")``: grades the drill as the notebook defines it
  (``grader.learner.notebook``) and prints what ``torchdrill check`` prints.

A notebook handed in is graded by ``grade``, ``grade-all`` and the Gradescope
autograder, which read its code cells without running them (``grader.intake.notebooks``).
"""

from __future__ import annotations

import ast
from pathlib import Path

from grader.core import drill_texts, i18n, syllabus
from grader.core.i18n import _, ngettext
from grader.core.stubs import handout_source

NOTEBOOKS_DIR = "notebooks"
# Installed at the course's pinned versions: the grading depends on them (hypothesis' examples
# on its version). The runtime's own packages are left alone unless missing: Colab's kernel
# needs its own versions of what nbformat, rich and jinja2 pull in.
TEST_PACKAGES = ("hypothesis", "pytest", "pytest-xdist")
IF_MISSING = (("rich", "rich"), ("jinja2", "jinja2"), ("nbformat", "nbformat"))

SETUP_CELL = '''# {run_once}
# {what_it_does}
# {no_torch}
import os, pathlib, subprocess, sys, urllib.request, zipfile

HANDOUT_URL = {url!r}  # {url_note}


def _handout():
    here = pathlib.Path.cwd().resolve()
    for folder in (here, *here.parents, here / "torchdrill-handout"):
        if (folder / "course.toml").is_file() and (folder / "tests" / "conftest.py").is_file():
            return folder
    if not HANDOUT_URL:
        raise RuntimeError({no_handout!r})
    target = here / "torchdrill-handout"
    if HANDOUT_URL.endswith(".zip"):
        archive, _ = urllib.request.urlretrieve(HANDOUT_URL)
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(target)
        inner = [p for p in target.iterdir() if (p / "course.toml").is_file()]
        return inner[0] if inner and not (target / "course.toml").is_file() else target
    subprocess.check_call(["git", "clone", "--depth", "1", HANDOUT_URL, str(target)])
    return target


COURSE = _handout()
os.environ["TORCHDRILL_COURSE"] = str(COURSE)
try:
    import grader, hypothesis, nbformat, pytest, rich  # noqa: F401, E401
except ImportError:
    import importlib, importlib.util, site
    pins = [line for line in (COURSE / "constraints.txt").read_text().splitlines()
            if line and not line.startswith(("#", "torch=="))]
    (COURSE / ".notebook-constraints.txt").write_text("\\n".join(pins) + "\\n")
    pip = [sys.executable, "-m", "pip", "install", "-q", "-c", str(COURSE / ".notebook-constraints.txt")]
    missing = [name for name, module in {if_missing!r} if importlib.util.find_spec(module) is None]
    subprocess.check_call([*pip, *{packages!r}, *missing])
    subprocess.check_call([*pip, "--no-deps", "-e", str(COURSE)])
    importlib.reload(site)
if str(COURSE) not in sys.path:
    sys.path.insert(0, str(COURSE))
from grader.learner.notebook import check  # noqa: E402
print({handout_at!r}, COURSE)
'''


def setup_cell(handout_url: str) -> str:
    """The notebook's first cell, its comments and messages in the language of ``_``."""
    def line(text: str) -> str:  # a comment's text on one line
        return " ".join(text.split())

    return SETUP_CELL.format(
        url=handout_url, packages=list(TEST_PACKAGES), if_missing=list(IF_MISSING),
        run_once=line(_("Set-up: run this cell once per session.")),
        what_it_does=line(_("It finds this course's handout, or downloads it, and installs torchdrill's "
                            "grader and its pinned test tools.")),
        no_torch=line(_("torch is the runtime's own: this cell never installs it.")),
        url_note=line(_("a .zip or a git repository of the handout, from your instructor")),
        no_handout=_("no torchdrill handout here: open this notebook inside the handout folder, or set "
                     "HANDOUT_URL above"),
        handout_at=_("torchdrill handout:")).rstrip("\n")


def _split_stub(text: str) -> tuple[str, str]:
    """(module docstring, the rest of the stub) of a stub's source."""
    tree = ast.parse(text)
    doc = ast.get_docstring(tree) or ""
    if not tree.body or not (isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant)
                             and isinstance(tree.body[0].value.value, str)):
        return doc, text
    end = tree.body[0].end_lineno or 0
    rest = "\n".join(text.splitlines()[end:]).strip("\n") + "\n"
    return doc, rest


def topic_notebook(root: Path, topic: syllabus.Topic, course_title: str, handout_url: str,
                   lang: str = "en", topic_title: str | None = None) -> str:
    """One topic's notebook as JSON text, every word in ``lang``."""
    with i18n.speaking(i18n.Lang(lang)):
        return _notebook(root, topic, course_title, handout_url, lang, topic_title)


def _notebook(root: Path, topic: syllabus.Topic, course_title: str, handout_url: str,
              lang: str, topic_title: str | None) -> str:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    total = 0.0
    drill_cells = []
    for drill in topic.drills:
        facts = syllabus.drill_facts(root, drill.id)
        points = facts["points"] or 0
        total += points
        doc, code = _split_stub(handout_source(root, drill.id, lang))
        drill_cells += [
            nbformat.v4.new_markdown_cell(
                _("## `{drill}` ({points:g} points)", drill=drill.id, points=points) + f"\n\n{doc}\n\n"
                + _("Write your answer in the next cell (replace each `raise NotImplementedError`), "
                    "run it, then run the check below it.")),
            nbformat.v4.new_code_cell(code.rstrip("\n")),
            nbformat.v4.new_code_cell(f'check("{drill.id}")'),
        ]
    nb.cells = [
        nbformat.v4.new_markdown_cell(
            f"# {course_title}: {topic_title or topic.title}\n\n"
            + ngettext("{n} drill, {points:g} points.", "{n} drills, {points:g} points.",
                       len(topic.drills), points=total) + " "
            + _("Run the set-up cell first. For each drill: read the spec, fill in the code cell, run "
                "it, and run its `check(...)` cell: it tries your functions on many generated inputs "
                "and, for every property that fails, shows the smallest input that breaks your code, "
                "what you returned and what was expected. On a GPU runtime the drill's `cuda` "
                "properties run too.") + "\n\n"
            + _("Hand in this notebook as it is: the grader reads your functions from their cells "
                "(the last definition of each counts) and never runs the rest.")),
        nbformat.v4.new_code_cell(setup_cell(handout_url)),
        *drill_cells,
    ]
    for i, cell in enumerate(nb.cells):  # stable ids: the same course writes the same notebooks
        cell["id"] = f"{topic.name}-{i}"
    return str(nbformat.writes(nb)) + "\n"


def write_notebooks(root: Path, out: Path, course: syllabus.Course, handout_url: str = "",
                    lang: str = "en") -> list[Path]:
    """``out/notebooks/<topic>.ipynb`` for every topic, every word in ``lang``; returns
    the files written."""
    folder = out / NOTEBOOKS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for topic in course.topics:
        path = folder / f"{topic.name or 'drills'}.ipynb"
        path.write_text(topic_notebook(root, topic, drill_texts.course_title(course, lang), handout_url,
                                       lang, drill_texts.topic_title(course, lang, topic.name)), encoding="utf-8")
        written.append(path)
    return written
