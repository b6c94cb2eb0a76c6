"""``torchdrill audit``: its parts find what they should, the course's own audit is
clean, and the audit fails on a drill that lost a property or a forbid entry."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.authoring.audit import accepted, do_nothing, mutants
from grader.authoring.audit.routes import Route, kept_examples, same
from grader.authoring.audit.run import route_source
from grader.core.errors import UsageError
from grader.tests import warm
from grader.tests.grading import REPO
from grader.tests.shared import shared

SOURCE = '''
import torch

def f(x, n: int = 2, flag: bool = False):
    """doc"""
    handles = []
    try:
        with torch.no_grad():
            y = x.detach().clone().sum(dim=1, keepdim=True)
        for i in range(n):
            y.add_(x[: i + 1].sum())
        if flag and n > 1:
            handles.append(y)
    finally:
        for h in handles:
            h.zero_()
    return y * 2 - 1
'''


def test_mutants_cover_the_classic_operators_and_the_learners_mistakes():
    found = mutants.mutants(SOURCE)
    kinds = {m.operator for m in found}
    assert kinds >= {"arithmetic", "comparison", "boolean", "constant", "bound", "dim", "dropped call",
                     "context", "finally", "statement", "inplace", "default"}, kinds
    base = ast.unparse(ast.parse(SOURCE))
    assert len({m.id for m in found}) == len(found), "mutant ids must be unique"
    for m in found:
        compile(m.source, m.id, "exec")
        assert ast.unparse(ast.parse(m.source)) != base, f"{m.id} changes nothing"
        assert m.diff.startswith("--- reference"), m.id
    words = " ".join(m.description for m in found)
    for expected in ("keepdim=True -> False", "`.detach()` dropped", "`.clone()` dropped", "`with no_grad()` dropped",
                     "the finally block dropped", "`.add_` -> `.add`", "`zero_(...)` deleted", "range(...)'s end + 1"):
        assert expected in words, f"no mutant does {expected!r}"


def test_mutants_leave_docstrings_and_the_module_level_alone():
    found = mutants.mutants('X = 1\n\ndef g(a=3):\n    """Two: 2."""\n    return a + 1\n')
    assert {m.description for m in found} == {"a default of g(): 3 -> 4", "a default of g(): 3 -> 2",
                                             "Add -> Sub", "1 -> 2", "1 -> 0"}


def test_do_nothing_answers_are_built_for_every_function_and_kind():
    stub = (REPO / "exercises/tensors/scatter.py").read_text()
    reference = REPO / "reference/tensors/scatter.py"
    answers = do_nothing.answers(stub, reference.read_text(), reference, seed=0)
    assert [a.id for a in answers] == [*do_nothing.KINDS, "mix-0", "mix-1"]
    for a in answers:
        assert set(a.kinds) == {"gather", "scatter"}
        compile(a.source, a.id, "exec")
    assert do_nothing.spec_error(reference.read_text()) == "ValueError"
    assert answers[-1].kinds != do_nothing.answers(stub, reference.read_text(), reference, seed=1)[-1].kinds or \
        answers[-2].kinds != do_nothing.answers(stub, reference.read_text(), reference, seed=1)[-2].kinds


def test_a_hunting_child_cannot_take_the_machines_memory():
    """A candidate asking for more than the hunt's headroom (one ran a hunt to 23 GiB of
    resident memory on a 24 GiB machine) fails as a wrong call does; a small one still works."""
    code = ("import torch\n"
            "from grader.authoring.audit.routes import HUNT_MEMORY_BYTES, _bound_memory\n"
            "_bound_memory()\n"
            "torch.ones(2**20, dtype=torch.uint8)\n"
            "try:\n"
            "    torch.ones(HUNT_MEMORY_BYTES + 2**30, dtype=torch.uint8)\n"
            "except RuntimeError as exc:\n"
            "    print('refused:', exc)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "refused:" in proc.stdout, proc.stdout + proc.stderr


def test_a_route_answer_keeps_the_other_functions_stubs():
    stub = (REPO / "exercises/tensors/broadcast.py").read_text()
    source = route_source(stub, Route("tensors/broadcast", "broadcast_shape", "torch.broadcast_shapes", "", ""))
    namespace: dict = {}
    exec(compile(source, "route", "exec"), namespace)
    assert tuple(namespace["broadcast_shape"]((2, 1), (1, 3))) == (2, 3)
    with pytest.raises(NotImplementedError):
        namespace["broadcast_strides"]((2,), (1,), (2,))


def test_route_examples_are_ordinary_and_tell_answers_apart():
    import torch

    calls: list = [((torch.zeros(0),), {}, torch.zeros(0))] + [((torch.arange(n),), {}, torch.arange(n) * 2) for n in range(1, 9)]
    kept = kept_examples(calls)
    assert 2 <= len(kept) <= 4 and all(c[0][0].numel() > 0 for c in kept)
    assert kept_examples([((1,), {}, True), ((2,), {}, True)]) == [], "answers all alike tell no route"
    assert same(torch.tensor([1, 2]), torch.tensor([1.0, 2.0])) and not same(torch.tensor([1, 2]), torch.tensor([2, 1]))
    assert same((2, 3), torch.Size([2, 3])) and not same(True, 1)


@pytest.mark.parametrize("text,problem", [
    ("[[accepted]]\nkind = 'mutant'\nid = 'x'\n", "accepted entry 1 needs"),
    ("[[accepted]]\nkind = 'typo'\nid = 'x'\nreason = 'r'\n", "accepted entry 1 needs"),
    ("[[accepted]\n", "not a TOML file"),
    ("[[accepted]]\nkind = 'do-nothing'\nid = 'zeros'\nreason = 'a do-nothing answer that scores is a hole'\n",
     "accepted entry 1 needs"),
    ("[[accepted]]\nkind = 'route'\nid = 'x'\nreason = 'short'\n", "at least 20 characters"),
    ("accepted = 'x'\n", "expected only [[accepted]] entries"),
    ("[[acepted]]\nkind = 'route'\n", "expected only [[accepted]] entries"),
])
def test_a_malformed_audit_file_is_an_error_naming_it(tmp_path, text, problem):
    path = accepted.path_for(tmp_path, "tensors/one_hot")
    path.parent.mkdir(parents=True)
    path.write_text(text)
    with pytest.raises(UsageError, match=re.escape(problem)) as caught:
        accepted.read(tmp_path, "tensors/one_hot")
    assert str(path) in str(caught.value)


def test_an_acceptance_applies_only_to_the_change_it_names(tmp_path):
    from grader.authoring.audit.run import DrillAudit, Finding, _apply_acceptances

    path = accepted.path_for(tmp_path, "tensors/one_hot")
    path.parent.mkdir(parents=True)
    path.write_text('[[accepted]]\nkind = "mutant"\nid = "m@1:0#0"\nchange = "`.clone()` dropped"\n'
                    'reason = "the copy is never written to, so dropping it changes nothing"\n'
                    '[[accepted]]\nkind = "route"\nid = "f=torch.g"\nreason = "the spec allows torch.g by its own words"\n')
    a = DrillAudit("tensors/one_hot", mutants_total=1, routes_complete=True, findings=[
        Finding("mutant", "m@1:0#0", "`.detach()` dropped", verdict="survived"),  # the id now names another change
        Finding("route", "f=torch.g", "f answered by torch.g", verdict="open")])
    _apply_acceptances(tmp_path, a)
    assert [f.id for f in a.unexplained] == ["m@1:0#0"] and a.stale == ["mutant m@1:0#0"]
    assert a.failing == 2


def _audit(course: Path, out: Path, *args: str) -> tuple[int, dict, str]:
    proc = warm.run(["-m", "grader", "audit", "--course", str(course), "--out", str(out), *args], course, 1200)
    data = json.loads((out / "audit.json").read_text()) if (out / "audit.json").is_file() else {}
    return proc.returncode, data, proc.stdout + proc.stderr


def test_the_course_audit_is_clean(tmp_path_factory):
    """Every drill, a fixed seed and a budget: no unexplained survivor, route or scoring
    do-nothing answer (the full audit, every mutant, is `torchdrill audit`)."""
    code, data, output = shared(tmp_path_factory, "course-audit",
                                lambda folder: _audit(REPO, folder, "--seed", "0", "--mutants", "3",
                                                      "--route-budget", "3", "-j", "2"))
    assert data, output
    unexplained = [(d["drill"], f["kind"], f["id"], f["verdict"]) for d in data["drills"] for f in d["findings"]
                   if f["verdict"] in ("survived", "scored", "open", "error") and not f["accepted"]]
    assert not unexplained and code == 0, f"{unexplained}\n{output[-3000:]}"
    assert len(data["drills"]) == len(json.loads((REPO / "tests/reference_times.json").read_text())["drills"])


def _course_copy(tmp_path: Path) -> Path:
    course = tmp_path / "course"
    for name in ("exercises", "reference", "tests", "audit"):
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, course / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "course.toml", course / "course.toml")
    return course


def _without(source: str, name: str) -> str:
    """``source`` without the test function ``name`` (its decorators included)."""
    start = source.rindex("\n\n", 0, source.index(f"def {name}("))
    end = source.find("\ndef ", source.index("\n", start + 2) + 1)
    return source[:start] + (source[source.rindex("\n\n", 0, end):] if end >= 0 else "\n")


def test_the_audit_fails_on_a_drill_that_lost_a_property(tmp_path):
    """Without its no-shapes property, broadcast's audit meets the mutant whose empty
    broadcast has one dim (max(..., default=1)), which nothing else catches."""
    course = _course_copy(tmp_path)
    test = course / "tests/tensors/test_broadcast.py"
    test.write_text(_without(test.read_text(), "test_no_shapes_broadcast_to_a_scalar"))
    code, data, output = _audit(course, tmp_path / "out", "tensors/broadcast", "--no-routes")
    survivors = [f["id"] for f in data["drills"][0]["findings"] if f["verdict"] == "survived" and not f["accepted"]]
    assert code == 1 and survivors, output[-3000:]


def test_the_audit_fails_on_a_drill_that_lost_a_forbid_entry(tmp_path):
    course = _course_copy(tmp_path)
    test = course / "tests/tensors/test_broadcast.py"
    source = test.read_text()
    line = next(x for x in source.splitlines(keepends=True) if x.strip().startswith('"torch.broadcast_shapes"'))
    test.write_text(source.replace(line, "", 1))
    code, data, output = _audit(course, tmp_path / "out", "tensors/broadcast", "--mutants", "0")
    open_routes = [f["id"] for f in data["drills"][0]["findings"] if f["verdict"] == "open" and not f["accepted"]]
    assert code == 1 and any("torch.broadcast_shapes" in r for r in open_routes), output[-3000:]
