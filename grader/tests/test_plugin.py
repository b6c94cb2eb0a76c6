"""The grading plugin on a tiny course: outcomes, messages, scores, results.

Every scenario is its own exercise in one course (each a copy of the same drill,
"double a tensor"), so one pytest run grades them all; a second run with two
xdist workers must agree with it exactly.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from grader.core.results_json import Results
from grader.tests import warm
from grader.tests.grading import outcomes_only

DRILL_TEST = '''
"""Doubles a tensor."""
import pytest, torch
from hypothesis import given, strategies as st
from grader.contract.expect import assert_same, expect_raises

pytestmark = pytest.mark.exercise(points=10, forbid={"torch.mul": "add the tensor to itself"})

@pytest.mark.weight(3)
@given(st.integers(-5, 5))
def test_doubles(impl, n):
    assert_same(impl.double(torch.tensor([n])), torch.tensor([2 * n]))

def test_rejects_strings(impl):
    with expect_raises(TypeError, when="given a string"):
        impl.double("x")

@pytest.mark.cuda
def test_on_gpu(impl):
    assert_same(impl.double(torch.ones(1, device="cuda")), torch.full((1,), 2.0, device="cuda"))
'''

HANG_TEST = '''
"""One property, for code that never returns."""
import pytest, torch
pytestmark = pytest.mark.exercise(points=10)

def test_doubles(impl):
    impl.double(torch.ones(1))
'''

GOOD = '''
def double(x):
    if isinstance(x, str):
        raise TypeError("not a tensor")
    return x + x
'''

SCENARIOS = {
    "good": GOOD,
    "missing": None,
    "stub": "def double(x):\n    raise NotImplementedError\n",
    "wrong": "def double(x):\n    return x + 0 if not isinstance(x, str) else x.foo\n",
    "partial": "def double(x):\n    return x + x\n",
    "raises": "def double(x):\n    return helper(x)\n\n\ndef helper(x):\n    return 1 / 0\n",
    "syntax": "def double(x:\n    pass\n",
    "bad_import": "import no_such_module_here\n",
    "no_function": "x = 1\n",
    "sys_exit": "def double(x):\n    import sys; sys.exit(0)\n",
    "pytest_skip": "def double(x):\n    import pytest; pytest.skip('x')\n",
    "key_error": "def double(x):\n    raise KeyError('k')\n",
    "forbidden": ("import torch\ndef double(x):\n    try:\n        return torch.mul(x, 2)\n"
                  "    except Exception:\n        return x + x\n"),
    "hangs": ("import time\ndef double(x):\n    while True:\n        try:\n            time.sleep(1)\n"
              "        except Exception:\n            pass\n"),
    "prints": "import sys\ndef double(x):\n    print('<b>hi</b>')\n    print('warn', file=sys.stderr)\n    return x\n",
    "subclass": ("import torch\nclass Liar(torch.Tensor):\n    def __eq__(self, other):\n        return True\n"
                 "def double(x):\n    if isinstance(x, str):\n        raise TypeError\n"
                 "    return (x + x).as_subclass(Liar)\n"),
}


def _make_course(root: Path) -> Path:
    (root / "tests" / "demo").mkdir(parents=True)
    for init in ("tests/__init__.py", "tests/demo/__init__.py", "tests/conftest.py"):
        (root / init).write_text("")
    sub = root / "sub" / "demo"
    sub.mkdir(parents=True)
    for name, source in SCENARIOS.items():
        (root / "tests" / "demo" / f"test_{name}.py").write_text(HANG_TEST if name == "hangs" else DRILL_TEST)
        if source is not None:
            (sub / f"{name}.py").write_text(textwrap.dedent(source))
    return root


# The hangs scenario waits this long in every grading of the course (two of them): short,
# yet far above what the other scenarios' one-line drills take on a busy machine.
TEST_TIMEOUT_S = 4


def _grade(root: Path, results: Path, *args: str) -> Results:
    warm.run(["-m", "pytest", "tests", "-q", "-p", "no:cacheprovider", "--rootdir", str(root),
              "--submission", str(root / "sub"), "--results", str(results),
              "--test-timeout", str(TEST_TIMEOUT_S), *args], root, 300)
    return json.loads(results.read_text())


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    return _make_course(tmp_path_factory.mktemp("course"))


@pytest.fixture(scope="module")
def graded(course) -> Results:
    return _grade(course, course / "serial.json")


def exercise(graded: dict, scenario: str) -> dict:
    return next(e for e in graded["exercises"] if e["id"] == f"demo/{scenario}")


def result_of(graded: dict, scenario: str, name: str) -> dict:
    return next(t for t in exercise(graded, scenario)["tests"] if t["name"] == name)


def test_correct_submission_scores_full_and_cuda_is_not_run(graded):
    ex = exercise(graded, "good")
    assert (ex["score"], ex["max_score"], ex["status"]) == (10, 10, "passed")
    assert ex["title"] == "Doubles a tensor."
    gpu = result_of(graded, "good", "test_on_gpu")
    assert gpu["outcome"] == "not_run" and "CUDA" in gpu["message"]


def test_missing_file_is_not_attempted(graded):
    ex = exercise(graded, "missing")
    assert (ex["score"], ex["status"]) == (0, "not_attempted")
    assert "does not exist" in result_of(graded, "missing", "test_doubles")["message"]


def test_stub_is_not_attempted(graded):
    outcomes = {t["outcome"] for t in exercise(graded, "stub")["tests"]}
    assert outcomes == {"not_attempted", "not_run"}


def test_wrong_answer_fails_with_shrunk_counterexample(graded):
    t = result_of(graded, "wrong", "test_doubles")
    assert t["outcome"] == "failed"
    assert "n=1" in t["counterexample"]["example"] or "n=-1" in t["counterexample"]["example"]
    call = t["counterexample"]["calls"][0]
    assert call["function"] == "double" and call["args"][0]["values"] in ([1], [-1])
    assert t["counterexample"]["diff"]["kind"] == "values"
    ex = exercise(graded, "wrong")
    assert (ex["status"], ex["score"]) == ("failed", 0)
    assert result_of(graded, "wrong", "test_rejects_strings")["outcome"] == "failed"


def test_partial_score_uses_weights(graded):
    ex = exercise(graded, "partial")
    assert ex["status"] == "partial"
    assert ex["score"] == pytest.approx(10 * 3 / 4)


def test_student_exception_is_an_error_with_their_traceback(graded):
    t = result_of(graded, "raises", "test_doubles")
    assert t["outcome"] == "error"
    assert "ZeroDivisionError" in t["message"] and "line 6" in t["message"]


@pytest.mark.parametrize("scenario,expected", [
    ("syntax", "line 1: SyntaxError"),
    ("bad_import", "ModuleNotFoundError"),
    ("no_function", "defines no function double()"),
])
def test_broken_file_is_an_error_naming_file_and_cause(graded, scenario, expected):
    assert exercise(graded, scenario)["status"] == "error"
    t = result_of(graded, scenario, "test_doubles")
    assert t["outcome"] == "error" and expected in t["message"] and f"{scenario}.py" in t["message"]


@pytest.mark.parametrize("scenario", ["sys_exit", "pytest_skip", "key_error"])
def test_escapes_from_student_code_are_errors(graded, scenario):
    assert result_of(graded, scenario, "test_doubles")["outcome"] == "error"
    assert exercise(graded, scenario)["max_score"] == 10  # a skip must not shrink the maximum


def test_forbidden_api_fails_naming_it_even_if_caught(graded):
    t = result_of(graded, "forbidden", "test_doubles")
    assert t["outcome"] == "failed"
    assert "torch.mul" in t["message"] and "add the tensor to itself" in t["message"]


def test_code_that_swallows_the_timeout_still_times_out(graded):
    assert result_of(graded, "hangs", "test_doubles")["outcome"] == "timed_out"


def test_student_output_is_kept_as_text(graded):
    t = result_of(graded, "prints", "test_rejects_strings")
    assert t["stdout"] == "<b>hi</b>\n" and t["stderr"] == "warn\n"


def test_suite_hash_is_recorded(graded):
    assert len(graded["suite_hash"]) == 16


def test_tensor_subclass_result_is_refused(graded):
    t = result_of(graded, "subclass", "test_doubles")
    assert t["outcome"] == "failed" and "torch.Tensor" in t["message"]


def test_totals_exclude_not_run_tests(graded):
    assert graded["max_score"] == 10 * len(SCENARIOS)
    assert graded["score"] > 0
    assert graded["score"] == pytest.approx(sum(e["score"] for e in graded["exercises"]))


def test_xdist_gives_the_same_results(course, graded):
    parallel = _grade(course, course / "parallel.json", "-n", "2")
    assert outcomes_only(parallel) == outcomes_only(graded)


def test_plugin_ignores_unmarked_tests(pytester):
    pytester.makepyfile(test_plain="def test_ok():\n    assert True\n")
    out = pytester.path / "results.json"
    result = pytester.runpytest_subprocess("--results", str(out))
    result.assert_outcomes(passed=1)
    assert not out.exists()


DIES_TEST = '''
"""Doubles a tensor; strings are the corner case."""
import pytest, torch
pytestmark = pytest.mark.exercise(points=10)

def test_doubles(impl):
    assert torch.equal(impl.double(torch.ones(1)), torch.full((1,), 2.0))

def test_doubles_strings(impl):
    assert impl.double("ab") == "abab"
'''


@pytest.mark.parametrize("dies_on", ["strings", "everything"])
def test_a_test_whose_process_dies_under_xdist_is_never_passed(tmp_path, dies_on):
    """In-process under xdist, ``os._exit`` in the student's code ends the xdist worker:
    its test's record, made passed at setup, used to stay passed (a drill of os._exit
    calls scored full marks), and the tests of its file that xdist never ran again were
    left out of the maximum. Now the test that died is an error, and a file with tests
    that never ran makes the grading incomplete: exit 14 and no results, not even an
    older file's. (xdist restarts a dead worker a few times, then gives up: here at once.)"""
    (tmp_path / "tests" / "demo").mkdir(parents=True)
    for init in ("tests/__init__.py", "tests/demo/__init__.py", "tests/conftest.py"):
        (tmp_path / init).write_text("")
    (tmp_path / "tests" / "demo" / "test_dies.py").write_text(DIES_TEST)
    (tmp_path / "sub" / "demo").mkdir(parents=True)
    condition = "isinstance(x, str)" if dies_on == "strings" else "True"
    (tmp_path / "sub" / "demo" / "dies.py").write_text(
        f"import os\ndef double(x):\n    if {condition}:\n        os._exit(0)\n    return x + x\n")
    results = tmp_path / "results.json"
    results.write_text("{}")  # an older grading's
    run = warm.run(["-m", "pytest", "tests", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
                    "--submission", str(tmp_path / "sub"), "--results", str(results), "-n", "1",
                    "--max-worker-restart", "0"], tmp_path, 300)
    if dies_on == "strings":  # the last test of its file: nothing left unrun
        tests = {t["name"]: t for t in json.loads(results.read_text())["exercises"][0]["tests"]}
        assert tests["test_doubles"]["outcome"] == "passed"
        assert tests["test_doubles_strings"]["outcome"] == "error", tests
        assert "ended during it" in tests["test_doubles_strings"]["message"]
    else:
        assert run.returncode == 3, run.stdout[-2000:] + run.stderr[-2000:]
        assert "1 test(s) never ran (tests/demo/test_dies.py::test_doubles_strings)" in run.stdout + run.stderr
        assert not results.exists()


INTERRUPTED_TEST = '''
"""A property interrupted by its budget, whose test turns the interruption into another error."""
import time
import pytest, torch
pytestmark = pytest.mark.exercise(points=10)

def test_doubles(impl):
    assert impl.double(torch.tensor([1])).tolist() == [2]
    try:
        end = time.process_time() + 30
        while time.process_time() < end:
            pass
    except BaseException:  # as hypothesis did in the field: FlakyStrategyDefinition
        raise RuntimeError("Inconsistent data generation!") from None
'''


def test_a_test_its_budget_stopped_is_timed_out_whatever_it_raised(tmp_path):
    """The drill's budget (its clock: ``grader.sandbox.clock``) can end inside hypothesis'
    own machinery, which then raised FlakyStrategyDefinition ("the test could not check
    the result"); a test a clock stopped is timed out, whatever it ends in."""
    (tmp_path / "tests" / "demo").mkdir(parents=True)
    for init in ("tests/__init__.py", "tests/demo/__init__.py", "tests/conftest.py"):
        (tmp_path / init).write_text("")
    (tmp_path / "tests" / "demo" / "test_slow.py").write_text(INTERRUPTED_TEST)
    (tmp_path / "sub" / "demo").mkdir(parents=True)
    (tmp_path / "sub" / "demo" / "slow.py").write_text(textwrap.dedent(GOOD))
    results = tmp_path / "results.json"
    warm.run(["-m", "pytest", "tests", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
              "--submission", str(tmp_path / "sub"), "--results", str(results), "--drill-budget", "1"],
             tmp_path, 300)
    test = json.loads(results.read_text())["exercises"][0]["tests"][0]
    assert test["outcome"] == "timed_out", test
    assert test["message"] == "the drill's grading budget ran out during this test"


def test_limits_in_seconds_are_zero_or_more_and_a_budget_more_than_zero():
    """``--call-timeout 0`` means no limit (it made the worker's socket non-blocking and
    failed every call); a negative limit and a budget of 0 are refused, saying why."""
    import argparse

    from grader.grading import options

    assert options.seconds("0") == 0 and options.seconds("2.5") == 2.5
    for bad in ("-1", "nan", "inf", "soon"):
        with pytest.raises(argparse.ArgumentTypeError):
            options.seconds(bad)
    with pytest.raises(argparse.ArgumentTypeError, match="would stop every property"):
        options.budget_seconds("0")
