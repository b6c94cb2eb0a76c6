"""``torchdrill release``: the handout holds nothing secret and grades itself.

The secrecy checks here are written independently of ``grader.authoring.release`` (their
own AST walks), so a bug in the release's own leak check cannot hide a leak.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader import cli
from grader.authoring import leaks, public_tests, release, student_files
from grader.authoring.leaks import find_leaks
from grader.core import syllabus
from grader.core.stubs import stub_source, write_stubs
from grader.core.syllabus import exercise_tests
from grader.tests.grading import REPO


@pytest.fixture(scope="module")
def handout(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release") / "handout"
    release.build(REPO, out)
    return out


def _functions(tree: ast.AST):
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _body(fn: ast.FunctionDef) -> str:
    body = fn.body[1:] if ast.get_docstring(fn) is not None else fn.body
    return ast.dump(ast.Module(body=body, type_ignores=[]))


def _is_stub(fn: ast.FunctionDef) -> bool:
    body = fn.body[1:] if ast.get_docstring(fn) is not None else fn.body
    return all(isinstance(s, ast.Pass) or (isinstance(s, ast.Raise) and "NotImplementedError" in ast.unparse(s))
               for s in body)


def _instructor_only_names() -> set[str]:
    """Every test in tests/ marked hidden or asking for the reference (``ref``)."""
    names = set()
    for path in (REPO / "tests").rglob("test_*.py"):
        for fn in _functions(ast.parse(path.read_text())):
            hidden = any("mark.hidden" in ast.unparse(d) for d in fn.decorator_list)
            if fn.name.startswith("test") and (hidden or "ref" in {a.arg for a in fn.args.args}):
                names.add(fn.name)
    return names


# ------------------------------------------------------------------ nothing secret

def test_the_handout_has_no_reference_function_body(handout):
    reference = {}
    for path in (REPO / "reference").rglob("*.py"):
        for fn in _functions(ast.parse(path.read_text())):
            if not _is_stub(fn):
                reference[_body(fn)] = f"{path.name}:{fn.name}"
    assert len(reference) >= 10
    files = list(handout.rglob("*.py"))
    assert len(files) > 20
    for path in files:
        for fn in _functions(ast.parse(path.read_text())):
            assert _body(fn) not in reference, f"{path}:{fn.name} is {reference.get(_body(fn))}"


def test_the_handout_names_no_instructor_only_test(handout):
    hidden = _instructor_only_names()
    assert {"test_matches_reference", "test_generator_step_leaves_discriminator_alone"} <= hidden
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, hidden)) + r")\b")
    for path in handout.rglob("*"):
        if path.is_file():
            text = leaks.catalog_text(path) if path.suffix == ".mo" else path.read_text()
            found = pattern.findall(text)
            assert not found, f"{path} names {sorted(set(found))}"


def test_the_handout_holds_no_reference_compiled_code_or_engine_tests(handout):
    files = {p.relative_to(handout).as_posix() for p in handout.rglob("*") if p.is_file()}
    assert not [f for f in files if f.startswith(("reference/", "grader/tests/", "bench/", ".ci/"))]
    assert not [f for f in files if f.endswith(".pyc") or "__pycache__" in f
                or f.rsplit("/", 1)[-1] in (".torchdrill-hints.json", "results.json")]


def test_every_drill_keeps_a_public_property_without_the_reference(handout):
    drills = exercise_tests(handout)
    assert sorted(drills) == sorted(exercise_tests(REPO))
    for drill, path in drills.items():
        tests = [fn for fn in ast.parse(path.read_text()).body
                 if isinstance(fn, ast.FunctionDef) and fn.name.startswith("test")]
        assert tests, f"{drill} has no public property"
        assert not [fn.name for fn in tests if "ref" in {a.arg for a in fn.args.args}]


# ------------------------------------------------------------------ what is in it

def test_the_handout_holds_what_a_student_needs(handout):
    for name in ("README.md", "course.toml", "tox.ini", "pyproject.toml", "constraints.txt",
                 "report_templates/student.html.j2", "grader/cli.py", "grader/grading/plugin.py",
                 "tests/conftest.py", "tests/strategies.py"):
        assert (handout / name).is_file(), name
    for stub in (REPO / "exercises").rglob("*.py"):  # pristine: a learner's own work is not handed out
        assert (handout / stub.relative_to(REPO)).read_text() == stub_source(stub.read_text())
    assert (handout / "course.toml").read_text() == (REPO / "course.toml").read_text()
    readme = (handout / "README.md").read_text()
    for words in ("torchdrill list", "torchdrill check contiguity", "torchdrill watch", "torchdrill hint",
                  "`tensors/one_hot` | 10", "## Handing in"):
        assert words in readme


def test_the_handout_keeps_the_courses_english_docstrings_for_torchdrill_stubs(handout):
    from grader.core import docstring_record, drill_texts

    kept = docstring_record.read(handout / "exercises")
    assert set(kept) == set(syllabus.load(REPO).ids)
    stub = (handout / "exercises" / "tensors" / "one_hot.py").read_text()
    assert kept["tensors/one_hot"] == drill_texts.docstrings(stub)


def test_the_handout_tox_ini_grades_and_needs_nothing_it_lacks(handout):
    text = (handout / "tox.ini").read_text()
    assert "[testenv:grade]" in text and "torchdrill grade {posargs:exercises}" in text
    assert re.findall(r"^envlist = (.*)$", text, re.MULTILINE) == ["grade"]  # no docs, no engine tests
    assert "reference" not in text.replace("no reference solutions", "") and "grader/tests" not in text
    assert "PIP_CONSTRAINT = {toxinidir}/constraints-cpu.txt" in text  # torch's CPU build
    assert (handout / "constraints-cpu.txt").read_text() == (REPO / "constraints-cpu.txt").read_text()


def test_a_course_whose_learner_did_two_drills_hands_out_pristine_stubs(tmp_path):
    """In a copy of the course whose exercises/ holds two finished drills (as a learner's
    or an instructor's working copy does), the handout and the stub checks still see the
    course's stubs, not that work."""
    copy = tmp_path / "course"
    shutil.copytree(REPO, copy, ignore=shutil.ignore_patterns(".git", ".tox", "reports", "__pycache__",
                                                              "*.egg-info", ".pytest_cache"))
    done = ("tensors/one_hot", "tensors/contiguity")
    for drill in done:  # the learner's own bodies in place of the stubs'
        stub = copy / "exercises" / f"{drill}.py"
        stub.write_text(stub.read_text().replace("raise NotImplementedError", "return None  # my attempt"))
    out = tmp_path / "handout"
    release.build(copy, out)
    for drill in done:
        handed = (out / "exercises" / f"{drill}.py").read_text()
        assert handed == stub_source((REPO / "exercises" / f"{drill}.py").read_text())
        assert "my attempt" not in handed
    written = write_stubs(copy, tmp_path / "stubs")
    assert {p.relative_to(tmp_path / "stubs").as_posix() for p in written} >= {f"{d}.py" for d in done}
    for drill in done:
        assert (tmp_path / "stubs" / f"{drill}.py").read_text() == (out / "exercises" / f"{drill}.py").read_text()


def test_a_copied_handout_grades_itself_and_scores_the_stubs_zero(handout, tmp_path):
    """The stubs self-check too: the pristine stubs a release hands out score 0, every
    property of every drill "not attempted", graded by the handout's own grader."""
    copy = tmp_path / "elsewhere"
    shutil.copytree(handout, copy)
    where = subprocess.run([sys.executable, "-c", "import grader.grading.plugin; print(grader.grading.plugin.__file__)"],
                           capture_output=True, text=True, cwd=copy, check=True).stdout.strip()
    assert where == str(copy / "grader" / "grading" / "plugin.py")  # its own grader, not the instructor's
    proc = subprocess.run([sys.executable, "-m", "grader", "grade", "--course", str(copy),
                           "--profile", "torchdrill-quick"],
                          capture_output=True, text=True, timeout=600, cwd=copy)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((copy / "reports" / "results.json").read_text())
    drills = syllabus.listed_ids(REPO)
    assert [ex["id"] for ex in results["exercises"]] == drills
    assert results["score"] == 0
    assert results["max_score"] == sum(syllabus.drill_facts(REPO, d)["points"] for d in drills)
    for ex in results["exercises"]:
        assert ex["status"] == "not_attempted", ex["id"]
        outcomes = {t["outcome"] for t in ex["tests"]}
        assert "not_attempted" in outcomes and outcomes <= {"not_attempted", "not_run"}, ex["id"]
        assert not any(t["hidden"] for t in ex["tests"])


# ------------------------------------------------------------------ cutting test modules

MODULE = '''\
"""A drill."""

import math
from contextlib import contextmanager, nullcontext

import pytest

pytestmark = pytest.mark.exercise(points=5)
LIMIT = 3
SECRET_TABLE = [1, 2, 3]


def shared(x):
    return x + LIMIT


def oracle(x):
    return math.sqrt(x) + SECRET_TABLE[0]


@pytest.fixture
def expected(ref):
    return ref.solve


# the comparison with the reference
@pytest.mark.weight(2)
def test_matches_reference(impl, ref):
    assert impl.solve(1) == ref.solve(1)


def test_uses_expected(impl, expected):
    assert impl.solve(2) == expected(2)


@pytest.mark.hidden
def test_secret_oracle(impl):
    with nullcontext():
        assert impl.solve(4) == oracle(4)


def test_public(impl):
    assert impl.solve(shared(1)) >= 0


class TestGroup:
    def test_kept(self, impl):
        assert impl.solve(0) == 0

    @pytest.mark.hidden
    def test_cut(self, impl):
        assert impl.solve(9) == oracle(9)
'''


def test_instructor_only_tests_and_what_only_they_use_are_cut():
    cut = public_tests.filter_test_module(MODULE)
    assert sorted(cut.removed_tests) == ["test_cut", "test_matches_reference", "test_secret_oracle",
                                         "test_uses_expected"]
    assert sorted(cut.kept_tests) == ["test_kept", "test_public"]
    tree = ast.parse(cut.source)
    names = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    assert names == {"shared", "test_public", "TestGroup", "test_kept"}
    assert "SECRET_TABLE" not in cut.source and "import math" not in cut.source
    assert "from contextlib import contextmanager\n" in cut.source  # nullcontext only hidden code used
    assert "LIMIT = 3" in cut.source and "# the comparison" not in cut.source
    assert '"""A drill."""' in cut.source and "pytestmark = pytest.mark.exercise(points=5)" in cut.source


def test_a_module_marked_hidden_keeps_no_test():
    cut = public_tests.filter_test_module("import pytest\npytestmark = [pytest.mark.exercise(points=1), "
                                     "pytest.mark.hidden]\n\ndef test_a(impl):\n    pass\n")
    assert cut.removed_tests == ["test_a"] and cut.kept_tests == []


def test_the_release_tox_ini_drops_what_needs_the_reference(tmp_path):
    ini = tmp_path / "tox.ini"
    ini.write_text("[tox]\nenvlist = py3\n\n[testenv]\npackage = editable\ncommands =\n"
                   "    pytest grader/tests\n\n[testenv:grade]\ncommands =\n    torchdrill grade\n\n"
                   "[testenv:cuda]\ncommands =\n    pytest tests --submission reference\n\n"
                   "[testenv:docs]\ncommands =\n    sphinx-build -W -b html docs docs/_build/html\n")
    text = student_files.student_tox_ini(ini)
    assert re.findall(r"^envlist = (.*)$", text, re.MULTILINE) == ["grade"]
    assert "[testenv:cuda]" not in text and "[testenv:docs]" not in text
    assert "package = editable" in text and "grader/tests" not in text


# ------------------------------------------------------------------ refusals

def test_the_leak_check_finds_a_reference_body_and_a_hidden_name(tmp_path):
    source = (REPO / "reference" / "tensors" / "one_hot.py").read_text()
    (tmp_path / "helpers.py").write_text(source.replace("def one_hot(", "def my_helper("))
    (tmp_path / "notes.md").write_text("see test_secret_thing for details")
    (tmp_path / "reference").mkdir()
    leaks = find_leaks(tmp_path, REPO, {"test_secret_thing"})
    assert any("my_helper() has the body of reference/tensors/one_hot.py:one_hot" in leak for leak in leaks)
    assert any("notes.md: names the instructor-only test test_secret_thing" in leak for leak in leaks)
    assert any("the reference solutions" in leak for leak in leaks)


def test_release_refuses_a_folder_that_is_not_empty(tmp_path, capsys):
    (tmp_path / "keep.txt").write_text("mine")
    assert cli.main(["release", str(tmp_path), "--course", str(REPO)]) == 2
    assert "already exists and is not an empty folder" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def _tiny_course(root: Path, test_source: str) -> None:
    (root / "tests" / "t").mkdir(parents=True)
    (root / "tests" / "conftest.py").write_text("")
    (root / "tests" / "t" / "test_d.py").write_text(test_source)
    (root / "course.toml").write_text('[[topics]]\nname = "t"\n[[topics.drills]]\nname = "d"\n'
                                      'hints = ["a", "b"]\n')
    (root / "tox.ini").write_text("[testenv:grade]\ncommands = torchdrill grade\n")


def test_release_refuses_a_drill_left_without_a_public_property(tmp_path):
    _tiny_course(tmp_path / "course", "import pytest\npytestmark = pytest.mark.exercise(points=1)\n\n"
                                      "def test_only(impl, ref):\n    assert impl.f() == ref.f()\n")
    with pytest.raises(release.ReleaseError, match="drill t/d would have no public property"):
        release.build(tmp_path / "course", tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".torchdrill-release-")]


def test_release_refuses_a_course_toml_that_disagrees_with_the_tests(tmp_path):
    _tiny_course(tmp_path / "course", "def test_x(impl):\n    pass\n")
    (tmp_path / "course" / "course.toml").write_text('[[topics]]\nname = "t"\n[[topics.drills]]\n'
                                                     'name = "other"\n')
    with pytest.raises(release.ReleaseError, match="only in course.toml: t/other; only in tests/: t/d"):
        release.build(tmp_path / "course", tmp_path / "out")


def test_the_handout_keeps_the_public_properties_titles_and_drops_the_hidden_ones(handout):
    """The translations travel with the handout, less the titles of instructor-only tests
    (their names would tell what the handout holds back)."""
    import tomllib

    hidden = _instructor_only_names()
    for lang_file in (REPO / "locales").rglob("*.toml"):
        given = handout / lang_file.relative_to(REPO)
        assert given.is_file(), given
        full = tomllib.loads(lang_file.read_text(encoding="utf-8")).get("properties", {})
        kept = tomllib.loads(given.read_text(encoding="utf-8")).get("properties", {})
        assert kept == {name: title for name, title in full.items() if name not in hidden}
    assert "test_matches_reference" in tomllib.loads(
        (REPO / "locales/zh_CN/attention/attention.toml").read_text(encoding="utf-8"))["properties"]


def test_a_handouts_course_toml_speaks_its_language():
    """``with_language``: the key replaced where course.toml has it, else added before the
    first table (a key after a table header would belong to that table), else at the end."""
    assert syllabus.with_language('title = "T"\nlanguage = "en"\n[[topics]]\n', "zh_CN") == \
        'title = "T"\nlanguage = "zh_CN"\n[[topics]]\n'
    assert syllabus.with_language('title = "T"\n[[topics]]\nname = "t"\n', "zh_CN") == \
        'title = "T"\nlanguage = "zh_CN"\n\n[[topics]]\nname = "t"\n'
    assert syllabus.with_language('title = "T"\n', "zh_CN") == 'title = "T"\nlanguage = "zh_CN"\n'
