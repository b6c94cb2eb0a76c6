"""Gradescope's results.json and JUnit XML, made from a results document alone."""

from __future__ import annotations

import csv
import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from grader.core import results_json, syllabus
from grader.core.results_json import ExerciseInfo, Results
from grader.gradescope import results as gradescope_results
from grader.reports import exports
from grader.tests.grading import REPO
from grader.tests.sample_results import SCRIPT, mixed_results

Record = results_json.TestRecord  # (a name starting "Test" would be collected by pytest)


@pytest.fixture(scope="module")
def results() -> Results:
    return mixed_results()


def by_name(tests: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in tests}


# ------------------------------------------------------------------ Gradescope

def test_gradescope_top_level(results):
    gs = gradescope_results.gradescope(results)
    assert gs["score"] == results["score"] and gs["max_score"] == results["max_score"]
    assert gs["output_format"] == "text" and gs["test_output_format"] == "text"
    assert len(gs["tests"]) == sum(len(ex["tests"]) for ex in results["exercises"])
    json.dumps(gs)  # plain JSON


def test_gradescope_tests_have_the_fields_gradescope_reads(results):
    for t in gradescope_results.gradescope(results)["tests"]:
        assert {"name", "score", "max_score", "output", "visibility"} <= t.keys()
        assert 0 <= t["score"] <= t["max_score"]


def test_gradescope_scores_add_up_to_the_total(results):
    tests = gradescope_results.gradescope(results)["tests"]
    assert math.isclose(sum(t["score"] for t in tests), results["score"], abs_tol=1e-3)
    assert math.isclose(sum(t["max_score"] for t in tests), results["max_score"], abs_tol=1e-3)


def test_gradescope_property_shares(results):
    tests = by_name(gradescope_results.gradescope(results)["tests"])
    one_hot = tests["tensors/one_hot: test_matches_f_one_hot"]  # weight 3 of 6 run, 10 points
    assert one_hot["max_score"] == 5.0 and one_hot["score"] == 0.0 and one_hot["status"] == "failed"
    passed = tests["tensors/one_hot: test_rows_sum_to_one"]
    assert passed["score"] == passed["max_score"] > 0 and passed["status"] == "passed"


def test_gradescope_hidden_tests_show_after_publishing(results):
    tests = by_name(gradescope_results.gradescope(results)["tests"])
    assert tests["basics/stack: test_big"]["visibility"] == "after_published"
    assert tests["basics/stack: test_hidden_edge_cases"]["visibility"] == "after_published"
    assert tests["basics/stack: test_matches_torch_stack"]["visibility"] == "visible"


def test_gradescope_not_run_is_pending_not_zero(results):
    tests = by_name(gradescope_results.gradescope(results)["tests"])
    pending = tests["cuda/pinned: test_overlap"]
    assert pending["max_score"] == 0 and "status" not in pending
    assert pending["output"].startswith("not run here: needs a CUDA device")


def test_gradescope_output_explains_failures(results):
    tests = by_name(gradescope_results.gradescope(results)["tests"])
    output = tests["tensors/one_hot: test_matches_f_one_hot"]["output"]
    assert "call: one_hot(<int64 tensor of shape (2,)>, 3)" in output
    assert "dtype differs: got float32, expected int64" in output
    error = tests["tensors/one_hot: test_negative_label_raises"]["output"]
    assert "Traceback (student code only):" in error and SCRIPT in error  # text, not HTML


def test_write_gradescope(results, tmp_path):
    path = gradescope_results.write_gradescope(results, tmp_path)
    assert path == tmp_path / "gradescope" / "results.json"
    assert json.loads(path.read_text()) == gradescope_results.gradescope(results)


# ------------------------------------------------------------------ JUnit

@pytest.fixture(scope="module")
def junit(results, tmp_path_factory) -> ET.Element:
    path = exports.write_junit(results, tmp_path_factory.mktemp("junit") / "junit.xml")
    return ET.parse(path).getroot()


def case(root: ET.Element, exercise: str, name: str) -> ET.Element:
    found = root.find(f"./testsuite[@name='{exercise}']/testcase[@name='{name}']")
    assert found is not None, name
    return found


def child(element: ET.Element, tag: str) -> ET.Element:
    found = element.find(tag)
    assert found is not None, tag
    return found


def test_junit_suites_and_counts(results, junit):
    assert junit.tag == "testsuites"
    suites = junit.findall("testsuite")
    assert [s.get("name") for s in suites] == [ex["id"] for ex in results["exercises"]]
    one_hot = junit.find("./testsuite[@name='tensors/one_hot']")
    assert (one_hot.get("tests"), one_hot.get("failures"), one_hot.get("errors"),
            one_hot.get("skipped")) == ("5", "1", "2", "1")
    total = sum(len(ex["tests"]) for ex in results["exercises"])
    assert junit.get("tests") == str(total)
    assert int(junit.get("failures")) == sum(int(s.get("failures")) for s in suites)


def test_junit_outcome_mapping(junit):
    assert list(case(junit, "tensors/one_hot", "test_rows_sum_to_one")) == []
    failure = child(case(junit, "tensors/one_hot", "test_matches_f_one_hot"), "failure")
    assert failure.get("type") == "failed"
    assert failure.get("message") == "result: dtype differs: got torch.float32, expected torch.int64"
    assert "dtype differs: got float32, expected int64" in (failure.text or "")
    error = child(case(junit, "tensors/one_hot", "test_negative_label_raises"), "error")
    assert error.get("message") == "one_hot() raised RuntimeError: index -1 is out of bounds"
    assert "line 9, in one_hot" in (error.text or "")
    assert child(case(junit, "tensors/one_hot", "test_slow_path"), "error").get("type") == "timed_out"
    stub = child(case(junit, "autograd/linear", "test_grad_input"), "failure")
    assert stub.get("type") == "not_attempted"
    skipped = child(case(junit, "cuda/pinned", "test_overlap"), "skipped")
    assert skipped.get("message", "").startswith("needs a CUDA device")
    assert case(junit, "cuda/pinned", "test_overlap").get("classname") == "cuda.pinned"


def test_junit_carries_any_submission_text(results, tmp_path):
    nasty = json.loads(json.dumps(results))
    nasty["exercises"][0]["tests"][0]["message"] = "bell\x07 nul\x00 esc\x1b[31m <![CDATA[ ]]> & <x>"
    path = exports.write_junit(nasty, tmp_path / "junit.xml")
    root = ET.parse(path).getroot()  # still well-formed XML
    text = child(root, ".//testcase/*").get("message", "")
    assert "<![CDATA[ ]]> & <x>" in text and "\x00" not in text


# ------------------------------------------------------------------ a class: grades.csv

def _class() -> dict[str, Results]:
    """Three students, two exercises: scores with float noise, a stub, a pending
    exercise, an exercise missing from one student's results."""
    exercises = {"a/one": ExerciseInfo("a/one", 10), "b/two": ExerciseInfo("b/two", 4)}

    def build(name: str, outcomes: dict[str, list[str]]) -> Results:
        tests = [Record(eid, f"test_{k}", outcome)
                 for eid, outs in outcomes.items() for k, outcome in enumerate(outs)]
        return results_json.build(f"/subs/{name}", {e: exercises[e] for e in outcomes}, tests)

    return {
        "zoe": build("zoe", {"a/one": ["passed", "passed", "failed"], "b/two": ["passed"]}),
        "ada": build("ada", {"a/one": ["not_attempted"] * 3, "b/two": ["not_run"]}),
        "bob, jr": build("bob, jr", {"a/one": ["passed", "passed", "passed"]}),
    }


def _read_csv(path) -> list[list[str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.reader(f))


def test_grades_csv_layout(tmp_path):
    path = exports.write_grades_csv(_class(), tmp_path / "grades.csv")
    assert path == tmp_path / "grades.csv"
    rows = _read_csv(path)
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "a/one", "b/two",
                       "Final Points"]
    assert rows[1:] == [  # the id in every id column: none is left empty
        ["ada", "ada", "ada", "ada", "", "0", "", "0"],  # stub: 0; pending: empty, not 0
        ["bob, jr", "bob, jr", "bob, jr", "bob, jr", "", "10", "", "10"],  # no b/two at all: empty
        ["zoe", "zoe", "zoe", "zoe", "", "6.67", "4", "10.67"],  # 2 decimals, no float noise
    ]


def _course(tmp_path, grades: str = "", name: str = "course") -> syllabus.Course:
    """A course whose course.toml lists b/two before a/one."""
    root = tmp_path / name
    root.mkdir()
    (root / "course.toml").write_text(
        f'title = "t"\n{grades}\n[[topics]]\nname = "b"\n  [[topics.drills]]\n  name = "two"\n'
        '[[topics]]\nname = "a"\n  [[topics.drills]]\n  name = "one"\n', encoding="utf-8")
    return syllabus.load(root)


def test_grades_csv_is_in_course_order_rounded_as_the_course_says(tmp_path):
    course = _course(tmp_path)
    assert course.grade_decimals == 2  # the default
    rows = _read_csv(exports.write_grades_csv(_class(), tmp_path / "g.csv", course=course))
    assert rows[0][5:] == ["b/two", "a/one", "Final Points"]
    assert rows[3] == ["zoe", "zoe", "zoe", "zoe", "", "4", "6.67", "10.67"]
    three = _course(tmp_path, "[grades]\ndecimals = 3", name="three")
    rows = _read_csv(exports.write_grades_csv(_class(), tmp_path / "g3.csv", course=three))
    assert rows[3][5:] == ["4", "6.667", "10.667"]


@pytest.mark.parametrize("bad", ["decimals = -1", "decimals = 1.5", 'decimals = "2"', "decimals = 7"])
def test_a_bad_grades_setting_is_a_clear_error(tmp_path, bad):
    with pytest.raises(syllabus.CourseError, match=r"\[grades\] decimals"):
        _course(tmp_path, f"[grades]\n{bad}")


def test_this_course_says_two_decimals():
    assert syllabus.load(Path(__file__).resolve().parents[2]).grade_decimals == 2


def test_grades_csv_is_what_canvas_reads(tmp_path):
    """Canvas's gradebook importer: the header starts with "Student" then "ID", its
    student columns end with "Section", "Final Points" is a column it ignores."""
    header = _read_csv(exports.write_grades_csv(_class(), tmp_path / "g.csv"))[0]
    assert "Student" in header[0] and "ID" in header[1] and header[4] == "Section"
    assert header[2:4] == ["SIS User ID", "SIS Login ID"] and header[-1] == "Final Points"
    raw = (tmp_path / "g.csv").read_bytes()
    assert not raw.startswith(b"\xef\xbb\xbf") and raw.endswith(b"\r\n")
    assert b'"bob, jr"' in raw  # quoted where it must be


def test_grades_csv_points_possible_row(tmp_path):
    rows = _read_csv(exports.write_grades_csv(_class(), tmp_path / "g.csv", points_possible=True))
    assert rows[1] == ["Points Possible", "", "", "", "", "10", "4", "14"]
    assert [r[0] for r in rows[2:]] == ["ada", "bob, jr", "zoe"]


def test_grades_csv_same_data_same_bytes(tmp_path):
    data = _class()
    one = exports.write_grades_csv(data, tmp_path / "1.csv").read_bytes()
    two = exports.write_grades_csv(dict(reversed(list(data.items()))), tmp_path / "2.csv").read_bytes()
    assert one == two
    assert sorted(p.name for p in tmp_path.iterdir()) == ["1.csv", "2.csv"]  # no temporaries


# ------------------------------------------------------------------ a class: Gradescope

def test_gradescope_class_files(tmp_path):
    data = {sid: r for sid, r in _class().items() if sid != "bob, jr"} | \
        {"bob.jr@uni.edu": _class()["bob, jr"]}
    paths = gradescope_results.write_gradescope_class(data, tmp_path)
    assert paths == [tmp_path / "gradescope" / f"{sid}.json" for sid in sorted(data)]
    for sid, path in zip(sorted(data), paths):
        assert json.loads(path.read_text()) == gradescope_results.gradescope(data[sid])


@pytest.mark.parametrize("bad", ["../x", "a/b", "a\\b", ".hidden", "-rf", "=cmd()", "", "x" * 101,
                                 "a\x00b", "two words", "zoe\u0308", "CON", "nul.json", "<script>"])
# (an id of any script is safe, ``zoë`` too: decomposed, as a Mac writes it, it is not)
def test_gradescope_class_refuses_unsafe_ids(tmp_path, bad):
    data = {"ada": _class()["ada"], bad: _class()["zoe"]}
    with pytest.raises(gradescope_results.ExportError, match="not a safe file name") as err:
        gradescope_results.write_gradescope_class(data, tmp_path)
    assert repr(bad) in str(err.value)
    assert not (tmp_path / "gradescope").exists()  # nothing written, not even the good ones


def test_gradescope_class_refuses_ids_equal_but_for_case(tmp_path):
    with pytest.raises(gradescope_results.ExportError, match="differ only in case"):
        gradescope_results.write_gradescope_class({"Ada": _class()["ada"], "ada": _class()["ada"]}, tmp_path)


def test_grade_all_publishes_grades_csv_in_course_order(tmp_path):
    """What grade-all writes: the course's order and decimals reach grades.csv."""
    from grader.classroom.classgrade import publish
    from grader.reports import student_report

    course = _course(tmp_path, "[grades]\ndecimals = 1")
    (course.root / student_report.TEMPLATES_DIR).mkdir()
    for template in ("student.html.j2", "class.html.j2"):
        (course.root / student_report.TEMPLATES_DIR / template).write_bytes(
            (REPO / student_report.TEMPLATES_DIR / template).read_bytes())

    from grader.classroom.gradebook import Gradebook

    with Gradebook.open(tmp_path / "gradebook.sqlite") as book:
        for sid, results in _class().items():
            book.record(sid, "content", results, wall_s=0.0, tests_s=0.0, worker="test")
        written = publish(book, tmp_path / "out", course.root, gradescope=None)
    rows = _read_csv(written["grades"])
    assert rows[0][5:] == ["b/two", "a/one", "Final Points"]
    assert rows[3] == ["zoe", "zoe", "zoe", "zoe", "", "4", "6.7", "10.7"]
