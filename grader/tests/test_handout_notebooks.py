"""``torchdrill release OUT --notebooks``: one notebook per topic, and, executed by a real
Jupyter kernel (nbclient) with the reference pasted into the stub cells, every drill's
``check`` cell reports the drill done."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, cast

import nbformat
import pytest

from grader.authoring import release
from grader.core import syllabus
from grader.tests.grading import REPO
from grader.tests.shared import shared

CHECK = re.compile(r'^check\("([\w/]+)"\)$')
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def handout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    def make(folder: Path) -> str:
        release.build(REPO, folder / "handout", notebooks=True)
        return str(folder / "handout")

    return Path(shared(tmp_path_factory, "notebook-handout", make))


def test_one_notebook_per_topic_with_spec_stub_and_check_for_each_drill(handout):
    course = syllabus.load(REPO)
    for topic in course.topics:
        nb = nbformat.read(handout / "notebooks" / f"{topic.name}.ipynb", as_version=4)
        nbformat.validate(nb)
        assert "HANDOUT_URL" in nb.cells[1].source and "from grader.learner.notebook import check" in nb.cells[1].source
        drills = nb.cells[2:]
        assert len(drills) == 3 * len(topic.drills)
        for drill, (spec, stub, check) in zip(topic.drills, zip(drills[0::3], drills[1::3], drills[2::3])):
            assert spec.cell_type == "markdown" and spec.source.startswith(f"## `{drill.id}`")
            assert stub.cell_type == "code" and "raise NotImplementedError" in stub.source
            assert check.source == f'check("{drill.id}")'
    assert "## In Jupyter or Colab" in (handout / "README.md").read_text()


def _output(cell: Any) -> str:
    return ANSI.sub("", "".join(o.get("text", "") for o in cell.get("outputs", [])))


def test_the_reference_pasted_into_the_notebooks_passes_check_for_every_drill(handout, tmp_path_factory):
    """One kernel for every drill: each topic's cells after the first set-up cell, each stub
    cell replaced by the reference; then a wrong one_hot, which check must explain."""
    from nbclient import NotebookClient

    def make(folder: Path) -> dict[str, str]:
        notebooks = sorted((handout / "notebooks").glob("*.ipynb"))
        combined = nbformat.read(notebooks[0], as_version=4)
        combined.cells = combined.cells[:2]
        for path in notebooks:
            cells = nbformat.read(path, as_version=4).cells[2:]
            for stub, check in zip(cells[1::3], cells[2::3]):
                drill = cast(re.Match[str], CHECK.match(check.source)).group(1)
                stub.source = (REPO / "reference" / f"{drill}.py").read_text()
                combined.cells += [stub, check]
        # a wrong one that loses 2 properties: check shrinks every failure (float_dtype loses
        # 9, and its check shrinks every one of them)
        wrong = REPO / "grader" / "tests" / "mutants" / "tensors" / "one_hot" / "classes_is_max.py"
        combined.cells += [nbformat.v4.new_code_cell(wrong.read_text()),
                           nbformat.v4.new_code_cell('done = check("one_hot")\nprint("returned", done)')]
        NotebookClient(combined, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(handout / "notebooks")}}).execute()
        return {(found.group(1) if (found := CHECK.match(c.source)) else "wrong"): _output(c)
                for c in combined.cells if c.cell_type == "code" and "check(" in c.source}

    outputs = shared(tmp_path_factory, "notebook-kernel", make)
    drills = syllabus.load(REPO).ids
    assert sorted(k for k in outputs if k != "wrong") == sorted(drills)
    for drill in drills:
        assert f"{drill}: done" in outputs[drill], outputs[drill]
    wrong = outputs["wrong"]
    assert "tensors/one_hot: not done yet" in wrong and "returned False" in wrong
    # the explanation `torchdrill check` prints: the property, the smallest call, the student's traceback
    assert "matches f one hot inferred classes" in wrong and "call: one_hot(" in wrong
    assert "Traceback (student code only)" in wrong and "one_hot.py" in wrong
