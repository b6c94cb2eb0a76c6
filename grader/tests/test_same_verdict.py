"""Same submission, same verdict, in every isolation mode.

Each submission in ``same_verdict/`` (its README says what each does) aliases its
arguments or changes them behind torch's back: an answer that is a view of ``x``, a
write through ``x.numpy()`` or ``x.data``, an in-place write, and a correct control. Each
is graded in-process (``--isolation none``) and sandboxed (``--isolation sandbox``);
every property must end the same way in both. The sandbox learns aliasing and
changes from what crosses the wire, never from the worker's say-so: before it did,
a view answer passed "returns a new tensor" sandboxed and failed it in-process, and a
numpy write passed "leaves its inputs unchanged" sandboxed. (A call that changes its
inputs now loses every property it is called in, in both modes.) A call that raises
answers with its arguments too: a write before the raise, or hooks a forward that
raised left on the model, passed sandboxed while they failed in-process.

Most submissions are of one drill (``tensors/repeat_interleave``, which has both
properties); a folder holding a whole ``<topic>/<name>.py`` is graded on that drill.
The quick profile and no shrinking keep it to seconds per grading.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from grader.tests.grading import REPO, exercise, run_grade
from grader.tests.shared import shared

CORPUS = Path(__file__).parent / "same_verdict"
DRILL = "tensors/repeat_interleave"
MODES = ("none", "sandbox")
# submission -> the properties it must lose (in both modes: the corpus does what it says).
# A call that changes its inputs loses every property it is called in (the grading
# session's rule for every drill), not only the drill's own "inputs unchanged".
EVERY = {"every property"}
LOSES = {
    "control": set(),
    "view_answer": {"test_result_shares_no_memory_with_x"},
    "numpy_write": EVERY,
    "data_write": EVERY,
    "inplace": EVERY,
    "write_then_raise": {"test_negative_count_raises_value_error", "test_wrong_number_of_counts_raises_value_error",
                         "test_dim_out_of_range_raises_index_error"},
    "hooks_left_on_raise": {"test_hooks_are_removed_when_the_forward_raises"},
    "model_copy": {"test_one_forward_per_batch"},
}


def submission_names() -> list[str]:
    return sorted(p.name for p in CORPUS.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))


# a twist of another drill than ``DRILL`` says which on its first line, and follows its reference
ANOTHER_DRILL = "# drill: "


def drill_of(name: str) -> str:
    """A twist's drill (``DRILL`` unless its first line names another); else the drill of
    the one ``<topic>/<name>.py`` the folder holds."""
    twist = CORPUS / name / "twist.py"
    if twist.exists():
        first = twist.read_text().partition("\n")[0]
        return first.removeprefix(ANOTHER_DRILL).strip() if first.startswith(ANOTHER_DRILL) else DRILL
    (path,) = (CORPUS / name).glob("*/*.py")
    return path.relative_to(CORPUS / name).with_suffix("").as_posix()


def write_submission(name: str, folder: Path) -> Path:
    """``folder``/``<drill>``.py: the correct code (the common code of ``DRILL``, another
    drill's reference), then ``name``'s twist; or the folder's whole submission file."""
    drill = drill_of(name)
    path = folder / f"{drill}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    twist = CORPUS / name / "twist.py"
    if twist.exists():
        correct = CORPUS / "_common.py" if drill == DRILL else REPO / "reference" / f"{drill}.py"
        path.write_text(correct.read_text() + "\n\n" + twist.read_text())
    else:
        path.write_text((CORPUS / name / f"{drill}.py").read_text())
    return folder


def _grade_all(root: Path) -> dict[str, dict[str, dict[str, str]]]:
    """submission -> mode -> test name -> outcome (and its message, for the report)."""
    graded: dict[str, dict[str, dict[str, str]]] = {}
    for name in submission_names():
        submission = write_submission(name, root / name / "submission")
        drill = drill_of(name)
        for mode in MODES:
            results = run_grade(submission, root / name / mode, "--isolation", mode, "--no-shrink",
                                "--profile", "torchdrill-quick", "--only", drill, timeout=300)
            graded.setdefault(name, {})[mode] = {
                t["name"]: f"{t['outcome']}: {(t.get('message') or '')[:300]}"
                for t in exercise(results, drill)["tests"]}
    return graded


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return shared(tmp_path_factory, "same-verdict", _grade_all)


def test_corpus_is_described():
    readme = (CORPUS / "README.md").read_text()
    assert sorted(LOSES) == submission_names()
    assert not [n for n in submission_names() if f"`{n}`" not in readme]


@pytest.mark.parametrize("name", submission_names())
def test_same_verdict_in_process_and_sandboxed(graded, name):
    inprocess, sandboxed = graded[name]["none"], graded[name]["sandbox"]
    assert sorted(inprocess) == sorted(sandboxed)
    differ = {test: (inprocess[test], sandboxed[test]) for test in inprocess
              if inprocess[test].split(":", 1)[0] != sandboxed[test].split(":", 1)[0]}
    assert not differ, f"{name}: in-process vs sandboxed verdicts differ: {differ}"
    lost = {test for test, outcome in inprocess.items() if not outcome.startswith(("passed", "not_run"))}
    expected = LOSES[name] if LOSES[name] is not EVERY else \
        {test for test, outcome in inprocess.items() if not outcome.startswith("not_run")}
    assert lost == expected, f"{name} lost {sorted(lost)}, expected {sorted(expected)}: {inprocess}"
    if name == "model_copy":  # said as what it is in both modes (sandboxed, the copy once failed to pickle a socket)
        assert all("never ran forward the model it was given" in mode["test_one_forward_per_batch"]
                   for mode in (inprocess, sandboxed)), (inprocess, sandboxed)
    if LOSES[name] is EVERY:  # said as what it is, in the properties that do not check it themselves
        assert all("leave the arguments as they were given" in inprocess[t]
                   for t in lost - {"test_inputs_unchanged"}), inprocess
