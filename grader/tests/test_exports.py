"""Gradescope's results.json and JUnit XML, made from a results document alone."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from grader import exports
from grader.tests.sample_results import SCRIPT, mixed_results


@pytest.fixture(scope="module")
def results() -> dict[str, Any]:
    return mixed_results()


def by_name(tests: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in tests}


# ------------------------------------------------------------------ Gradescope

def test_gradescope_top_level(results):
    gs = exports.gradescope(results)
    assert gs["score"] == results["score"] and gs["max_score"] == results["max_score"]
    assert gs["output_format"] == "text" and gs["test_output_format"] == "text"
    assert len(gs["tests"]) == sum(len(ex["tests"]) for ex in results["exercises"])
    json.dumps(gs)  # plain JSON


def test_gradescope_tests_have_the_fields_gradescope_reads(results):
    for t in exports.gradescope(results)["tests"]:
        assert {"name", "score", "max_score", "output", "visibility"} <= t.keys()
        assert 0 <= t["score"] <= t["max_score"]


def test_gradescope_scores_add_up_to_the_total(results):
    tests = exports.gradescope(results)["tests"]
    assert math.isclose(sum(t["score"] for t in tests), results["score"], abs_tol=1e-3)
    assert math.isclose(sum(t["max_score"] for t in tests), results["max_score"], abs_tol=1e-3)


def test_gradescope_property_shares(results):
    tests = by_name(exports.gradescope(results)["tests"])
    one_hot = tests["tensors/one_hot: test_matches_f_one_hot"]  # weight 3 of 6 run, 10 points
    assert one_hot["max_score"] == 5.0 and one_hot["score"] == 0.0 and one_hot["status"] == "failed"
    passed = tests["tensors/one_hot: test_rows_sum_to_one"]
    assert passed["score"] == passed["max_score"] > 0 and passed["status"] == "passed"


def test_gradescope_hidden_tests_show_after_publishing(results):
    tests = by_name(exports.gradescope(results)["tests"])
    assert tests["basics/stack: test_big"]["visibility"] == "after_published"
    assert tests["basics/stack: test_hidden_edge_cases"]["visibility"] == "after_published"
    assert tests["basics/stack: test_matches_torch_stack"]["visibility"] == "visible"


def test_gradescope_not_run_is_pending_not_zero(results):
    tests = by_name(exports.gradescope(results)["tests"])
    pending = tests["cuda/pinned: test_overlap"]
    assert pending["max_score"] == 0 and "status" not in pending
    assert pending["output"].startswith("not run here: needs a CUDA device")


def test_gradescope_output_explains_failures(results):
    tests = by_name(exports.gradescope(results)["tests"])
    output = tests["tensors/one_hot: test_matches_f_one_hot"]["output"]
    assert "call: one_hot(<int64 tensor of shape (2,)>, 3)" in output
    assert "dtype differs: got float32, expected int64" in output
    error = tests["tensors/one_hot: test_negative_label_raises"]["output"]
    assert "Traceback (student code only):" in error and SCRIPT in error  # text, not HTML


def test_write_gradescope(results, tmp_path):
    path = exports.write_gradescope(results, tmp_path)
    assert path == tmp_path / "gradescope" / "results.json"
    assert json.loads(path.read_text()) == exports.gradescope(results)


# ------------------------------------------------------------------ JUnit

@pytest.fixture(scope="module")
def junit(results, tmp_path_factory) -> ET.Element:
    path = exports.write_junit(results, tmp_path_factory.mktemp("junit") / "junit.xml")
    return ET.parse(path).getroot()


def case(root: ET.Element, exercise: str, name: str) -> ET.Element:
    found = root.find(f"./testsuite[@name='{exercise}']/testcase[@name='{name}']")
    assert found is not None, name
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
    failure = case(junit, "tensors/one_hot", "test_matches_f_one_hot").find("failure")
    assert failure.get("type") == "failed"
    assert failure.get("message") == "result: dtype differs: got torch.float32, expected torch.int64"
    assert "dtype differs: got float32, expected int64" in failure.text
    error = case(junit, "tensors/one_hot", "test_negative_label_raises").find("error")
    assert error.get("message") == "one_hot() raised RuntimeError: index -1 is out of bounds"
    assert "line 9, in one_hot" in error.text
    assert case(junit, "tensors/one_hot", "test_slow_path").find("error").get("type") == "timed_out"
    stub = case(junit, "autograd/linear", "test_grad_input").find("failure")
    assert stub.get("type") == "not_attempted"
    skipped = case(junit, "cuda/pinned", "test_overlap").find("skipped")
    assert skipped.get("message").startswith("needs a CUDA device")
    assert case(junit, "cuda/pinned", "test_overlap").get("classname") == "cuda.pinned"


def test_junit_carries_any_submission_text(results, tmp_path):
    nasty = json.loads(json.dumps(results))
    nasty["exercises"][0]["tests"][0]["message"] = "bell\x07 nul\x00 esc\x1b[31m <![CDATA[ ]]> & <x>"
    path = exports.write_junit(nasty, tmp_path / "junit.xml")
    root = ET.parse(path).getroot()  # still well-formed XML
    text = root.find(".//testcase/*").get("message")
    assert "<![CDATA[ ]]> & <x>" in text and "\x00" not in text
