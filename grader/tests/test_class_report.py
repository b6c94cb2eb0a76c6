"""The class report: its figures on a hand-made class, and the page made from them.

The class (five students, two exercises) is small enough to work every figure
out by hand; the expected numbers below are those hand computations, not
copies of what the code printed.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import subprocess
import sys
import time
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from grader.core import results_json
from grader.core.results_json import ExerciseInfo, Results
from grader.reports import class_report, student_report

Record = results_json.TestRecord  # (a name starting "Test" would be collected by pytest)

REPO = Path(__file__).resolve().parents[2]
SCRIPT = "<script>alert('pwned')</script>"
HOSTILE = "<script>alert(1)</script>"  # a student id (the name of a submitted folder)


def tensor(shape: list[int], values: Any, dtype: str = "int64",
           stride: list[int] | None = None) -> dict[str, Any]:
    """A tensor as grader.contract.describe describes one."""
    if stride is None:
        stride, step = [], 1
        for d in reversed(shape):
            stride.insert(0, step)
            step *= max(d, 1)
    return {"type": "tensor", "shape": shape, "dtype": dtype, "stride": stride,
            "device": "cpu", "values": values, "elided": False}


def call(*args: Any, function: str = "one", **kwargs: Any) -> dict[str, Any]:
    return {"function": function, "args": list(args), "kwargs": kwargs, "result": 0}


X = {"calls": [call(tensor([2], [0, 0]), 2)]}
Z = {"calls": [call(tensor([0], []), 1)]}
Y = {"calls": [call(tensor([2, 2], [[0, 1], [2, 3]], stride=[1, 2]), 3)]}

EXERCISES = {"a/one": ExerciseInfo("a/one", 10, "One."), "b/two": ExerciseInfo("b/two", 4, "Two.")}


def student(name: str, *tests: Record, exercises: tuple[str, ...] = ("a/one", "b/two")
            ) -> Results:
    results = results_json.build(f"/subs/{name}", {e: EXERCISES[e] for e in exercises},
                                   list(tests), {"torch": "test"}, suite="s1")
    results["graded_at"] = "2026-11-22T10:00:00+00:00"
    return results


def T(exercise: str, name: str, outcome: str, **kw: Any) -> Record:
    return Record(exercise, name, outcome, **kw)


def hand_made_class() -> dict[str, Results]:
    """a/one (10 points): t1, t2. b/two (4 points): u1, u2 (u2 mostly not run here)."""
    return {
        "ada": student("ada", T("a/one", "test_t1", "passed"), T("a/one", "test_t2", "passed"),
                       T("b/two", "test_u1", "passed"), T("b/two", "test_u2", "not_run",
                                                          message="needs a CUDA device")),
        "bob": student("bob", T("a/one", "test_t1", "failed", message="wrong", counterexample=X),
                       T("a/one", "test_t2", "passed"),
                       T("b/two", "test_u1", "error", counterexample=X,
                         message="two() raised RuntimeError: boom\nTraceback (student code only):\n  x"),
                       T("b/two", "test_u2", "not_run", message="needs a CUDA device")),
        "cy": student("cy", T("a/one", "test_t1", "failed", message="wrong", counterexample=X),
                      T("a/one", "test_t2", "failed", message="wrong", counterexample=Y),
                      T("b/two", "test_u1", "not_run", message="needs a CUDA device"),
                      T("b/two", "test_u2", "not_run", message="needs a CUDA device")),
        "dee": student("dee", T("a/one", "test_t1", "not_attempted", message="stub"),
                       T("a/one", "test_t2", "not_attempted", message="stub"),
                       T("b/two", "test_u1", "timed_out", message="ran past its 10 s limit"),
                       T("b/two", "test_u2", "passed")),
        "eve": student("eve", T("a/one", "test_t1", "failed", message="wrong", counterexample=Z),
                       T("a/one", "test_t2", "passed"), exercises=("a/one",)),
    }


PROBLEMS = {"notes.txt": "not a folder or a .zip", "zed.zip": "not a valid zip file"}


@pytest.fixture(scope="module")
def summary() -> dict[str, Any]:
    return class_report.class_summary(hand_made_class(), PROBLEMS)


def by_id(rows: list[dict[str, Any]], key: str = "id") -> dict[str, dict[str, Any]]:
    return {r[key]: r for r in rows}


# ------------------------------------------------------------------ figures

def test_totals(summary):
    t = summary["totals"]
    # ada 10 + 4, bob 5 + 0, cy 0 (+ b/two pending), dee 0 + 2, eve 5 (no b/two)
    assert sorted(t["scores"]) == [0, 2, 5, 5, 14]
    assert t["mean"] == pytest.approx(26 / 5) and t["median"] == 5
    assert (t["min"], t["max"], t["full_points"]) == (0, 14, 14)
    assert t["with_pending"] == 1  # cy: b/two's 4 points are pending, not zero
    assert summary["student_count"] == 5


def test_exercise_figures(summary):
    one, two = by_id(summary["exercises"])["a/one"], by_id(summary["exercises"])["b/two"]
    assert one["scores"] == [0, 0, 5, 5, 10] and one["attempted_scores"] == [0, 5, 5, 10]
    assert (one["mean"], one["median"]) == (4, 5)
    assert one["full_marks_share"] == pytest.approx(1 / 5)
    assert one["not_attempted_share"] == pytest.approx(1 / 5)  # dee's stub
    assert (one["graded"], one["pending"], one["missing"]) == (5, 0, 0)
    # b/two: cy's is pending (nothing ran) and eve has none: both left out of the figures
    assert two["scores"] == [0, 2, 4]
    assert (two["graded"], two["pending"], two["missing"]) == (3, 1, 1)
    assert (two["mean"], two["median"]) == (2, 2)
    assert two["full_marks_share"] == pytest.approx(1 / 3)  # ada: u1 passed, u2 not run here
    assert two["not_attempted_share"] == 0


def test_property_failure_rates_worst_first(summary):
    rows = [(p["exercise"], p["test"], p["failures"], p["ran"]) for p in summary["properties"]]
    assert rows == [
        ("a/one", "test_t1", 3, 4),  # bob, cy, eve lost it; dee's stub is not in the denominator
        ("b/two", "test_u1", 2, 3),  # bob error, dee timed out; cy's did not run here
        ("a/one", "test_t2", 1, 4),
        ("b/two", "test_u2", 0, 1),  # ran only for dee
    ]
    t1 = summary["properties"][0]
    assert t1["rate"] == pytest.approx(0.75) and t1["title"] == "t1"
    assert (t1["failed"], t1["not_attempted"]) == (3, 1)
    u1 = summary["properties"][1]
    assert (u1["errors"], u1["timed_out"], u1["not_run"]) == (1, 1, 1)


def test_equal_counterexamples_are_counted_together(summary):
    t1 = summary["properties"][0]
    groups = [(g["text"], g["count"], g["students"]) for g in t1["top_inputs"]]
    assert groups == [
        ("one(<int64 tensor of shape (2,)>, 2) where argument 1 = [0, 0]", 2, ["bob", "cy"]),
        ("one(<int64 tensor of shape (0,)>, 1)", 1, ["eve"]),
    ]
    assert t1["distinct_inputs"] == 2 and t1["without_input"] == 0
    u1 = summary["properties"][1]  # dee's timeout recorded no input
    assert u1["without_input"] == 1 and [g["count"] for g in u1["top_inputs"]] == [1]


def test_top_three_inputs_most_common_first():
    cls = {}
    for k, shape in enumerate([[1], [2], [2], [3], [3], [3], [4], [4], [4], [4]]):
        cx = {"calls": [call(tensor(shape, "...", dtype="float32"))]}
        cls[f"s{k}"] = student(f"s{k}", T("a/one", "test_t1", "failed", counterexample=cx),
                               exercises=("a/one",))
    prop = class_report.class_summary(cls, {})["properties"][0]
    assert [(g["text"], g["count"]) for g in prop["top_inputs"]] == [
        ("one(<float32 tensor of shape (4,)>)", 4), ("one(<float32 tensor of shape (3,)>)", 3),
        ("one(<float32 tensor of shape (2,)>)", 2)]
    assert prop["distinct_inputs"] == 4 and prop["rate"] == 1


def test_input_text():
    assert class_report.input_text(Y) == ("one(<int64 tensor of shape (2, 2)>, 3) where argument 1 = "
                                         "[[0, 1], [2, 3]], argument 1 non-contiguous, stride (1, 2)")
    big = {"calls": [call(tensor([3, 3], "...", stride=[1, 3]))]}
    assert class_report.input_text(big) == ("one(<int64 tensor of shape (3, 3)>) where argument 1 "
                                           "non-contiguous, stride (1, 3)")
    example = {"example": "Failing test case: test_x(\n    impl=<Impl object at 0x7f98e35ed650>,\n)"}
    assert class_report.input_text(example) == "Failing test case: test_x( impl=<Impl object>, )"
    assert class_report.input_text({}) is None and class_report.input_text(None) is None


def test_errors_by_student_and_problems(summary):
    errors = [(e["student"], e["exercise"], e["test"], e["outcome"], e["message"])
              for e in summary["errors"]]
    assert errors == [("bob", "b/two", "test_u1", "error", "two() raised RuntimeError: boom"),
                      ("dee", "b/two", "test_u1", "timed_out", "ran past its 10 s limit")]
    assert summary["problems"] == [{"name": "notes.txt", "reason": "not a folder or a .zip"},
                                   {"name": "zed.zip", "reason": "not a valid zip file"}]


def test_a_drill_that_does_not_import_is_one_error_row():
    broken = "tensors/x.py, line 3: SyntaxError: expected ':'"
    cls = {"fay": student("fay", *(T("a/one", f"test_t{i}", "error", message=broken) for i in range(1, 9)),
                          T("a/one", "test_t9", "timed_out", message="ran past its 10 s limit"),
                          exercises=("a/one",))}
    rows = class_report.class_summary(cls, {})["errors"]
    assert [(r["test"], r["outcome"], r["more"]) for r in rows] == [("test_t1", "error", 7),
                                                                   ("test_t9", "timed_out", 0)]
    assert "and 7 more the same" in class_report.render_html(cls, {}, REPO)


def test_roster_rows(summary):
    rows = by_id(summary["students"])
    assert [r["id"] for r in summary["students"]] == ["ada", "bob", "cy", "dee", "eve"]
    assert rows["cy"]["cells"]["b/two"]["status"] == "not_run" and rows["cy"]["pending_points"] == 4
    assert rows["eve"]["cells"]["b/two"] is None
    assert rows["ada"]["href"] == "students/ada/index.html"
    assert class_report.student_href("a b#c?/d") == "students/a%20b%23c%3F%2Fd/index.html"
    assert class_report.student_href("张三-a.b") == "students/张三-a.b/index.html"


def test_empty_class():
    s = class_report.class_summary({}, {"x": "why"})
    assert s["student_count"] == 0 and s["totals"]["mean"] is None and s["properties"] == []


# ------------------------------------------------------------------ page

@pytest.fixture(scope="module")
def hostile_class() -> dict[str, Results]:
    cls = hand_made_class()
    evil = student(HOSTILE, T("a/one", "test_t1", "error", counterexample=X,
                              message=f"one() raised ValueError: {SCRIPT}"),
                   T("a/one", "test_t2", "failed", message="wrong", stdout=SCRIPT,
                     counterexample={"calls": [call(f"{SCRIPT}")]}), exercises=("a/one",))
    evil["exercises"][0]["static_flags"] = [
        {"name": "torch.ops", "line": 3, "col": 5, "code": f"torch.ops.aten.one_hot(x)  # {SCRIPT}",
         "indirect": True}]
    cls[HOSTILE] = evil
    return cls


@pytest.fixture(scope="module")
def html(hostile_class) -> str:
    return class_report.render_html(hostile_class, {f"{SCRIPT}.zip": f"bad zip {SCRIPT}"}, REPO,
                                   title="Week 3")


def test_student_text_is_escaped(html):
    assert SCRIPT not in html and HOSTILE not in html
    assert html.count("<script") == 1  # ours, and only ours
    assert "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;" in html  # the message, as text
    assert "bad zip &lt;script&gt;" in html  # a problem's reason
    quoted = "students/%3Cscript%3Ealert%281%29%3C%2Fscript%3E/index.html"
    assert f'href="{quoted}"' in html  # the link to the hostile id's report


def test_content_security_policy_allows_exactly_our_script(html):
    meta = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert meta is not None
    csp = unescape(meta.group(1))
    scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in csp
    assert "default-src 'none'" in csp and "unsafe-inline" not in csp.split("script-src")[1]


def test_static_flags_are_listed_by_student(html, hostile_class):
    """The scan's findings, forbidden uses and routes around the guard, per student, escaped."""
    rows = class_report.class_summary(hostile_class, {})["flags"]
    assert [(r["student"], r["exercise"], r["name"], r["line"], r["route"]) for r in rows] == [
        (HOSTILE, "a/one", "torch.ops", 3, True)]
    section = html.split('id="flags"')[1].split("</section>")[0]
    assert "torch.ops.aten.one_hot(x)" in section and "route around the guard" in section
    assert SCRIPT not in section


def test_page_sections_and_charts(html, hostile_class):
    for section in ("overview", "distribution", "exercises", "properties", "errors", "flags", "problems",
                    "roster"):
        assert f'id="{section}' in html
    assert html.count("<svg") == 1 + 2  # totals + one per exercise graded by someone
    assert "<?xml" not in html and "<dc:date>" not in html
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids)), "ids must be unique across the inline SVGs"
    assert "<text" in html  # svg.fonttype none: text stays text
    assert "Week 3" in html and "denominator" not in html  # the title; words, not jargon
    assert "students whose code it ran against" in html  # the denominator, said on the page


def test_two_renders_are_identical(hostile_class):
    one = class_report.render_html(hostile_class, PROBLEMS, REPO)
    two = class_report.render_html(hostile_class, PROBLEMS, REPO)
    assert one == two


def test_another_process_renders_the_same_bytes(tmp_path):
    """Same data, same page, whatever the process and its hash seed (SVG ids included)."""
    code = ("import sys; from pathlib import Path; from grader.reports import class_report; "
            "from grader.tests.test_class_report import hand_made_class, PROBLEMS; "
            "sys.stdout.buffer.write(class_report.render_html(hand_made_class(), PROBLEMS, "
            "Path(sys.argv[1])).encode())")
    other = subprocess.run([sys.executable, "-c", code, str(REPO)], capture_output=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": "12345"}, cwd=REPO).stdout
    assert other.decode() == class_report.render_html(hand_made_class(), PROBLEMS, REPO)


def test_write_class_report(tmp_path):
    path = class_report.write_class_report(hand_made_class(), PROBLEMS, tmp_path, REPO)
    assert path == tmp_path / "class.html" and path.read_text().startswith("<!DOCTYPE html>")
    assert [p.name for p in tmp_path.iterdir()] == ["class.html"]  # no temporary left behind
    assert path.stat().st_mode & 0o777 == 0o644


def test_missing_template_is_a_clear_error(tmp_path):
    with pytest.raises(student_report.ReportError, match="class.html.j2"):
        class_report.render_html(hand_made_class(), {}, tmp_path)


def test_forty_students_twenty_four_exercises():
    exercises = {f"unit{e // 6}/drill_{e:02d}": ExerciseInfo(f"unit{e // 6}/drill_{e:02d}", 10)
                 for e in range(24)}
    cls = {}
    for s in range(40):
        tests = [Record(eid, f"test_p{k}", "passed" if (s + k + e) % 3 else "failed",
                            counterexample=None if (s + k + e) % 3 else X)
                 for e, eid in enumerate(exercises) for k in range(5)]
        cls[f"s{s:02d}"] = results_json.build(f"/subs/s{s:02d}", exercises, tests)
    start = time.perf_counter()
    page = class_report.render_html(cls, {}, REPO)
    elapsed = time.perf_counter() - start
    print(f"class page for 40 students x 24 exercises: {elapsed:.2f} s, {len(page) // 1024} KiB")
    assert page.count("<svg") == 25
    assert elapsed < 30  # a hang guard: generous for a busy machine


# ------------------------------------------------------------------ reads like a product (issue 26)

def course_listing(tmp_path: Path, *ids: str) -> Path:
    """A course folder whose course.toml lists ``ids`` in that order, with this repo's templates."""
    root = tmp_path / "course"
    (root / student_report.TEMPLATES_DIR).mkdir(parents=True)
    for name in (student_report.STUDENT_TEMPLATE, class_report.CLASS_TEMPLATE):
        (root / student_report.TEMPLATES_DIR / name).write_bytes((REPO / student_report.TEMPLATES_DIR / name).read_bytes())
    toml = 'title = "t"\n'
    for eid in ids:
        topic, name = eid.split("/")
        toml += f'[[topics]]\nname = "{topic}"\n  [[topics.drills]]\n  name = "{name}"\n'
    (root / "course.toml").write_text(toml, encoding="utf-8")
    return root


def test_exercises_are_in_course_order_everywhere(tmp_path):
    """course.toml lists b/two first: the cards, the roster's columns and its cells follow it."""
    course = course_listing(tmp_path, "b/two", "a/one")
    page = class_report.render_html(hand_made_class(), PROBLEMS, course)
    assert re.findall(r'<article class="ex-card"[^>]*data-exercise="([^"]+)"', page) == ["b/two", "a/one"]
    roster = page.split('id="roster"', 1)[1]
    assert re.findall(r'<th class="num ex"[^>]*data-exercise="([^"]+)"', roster) == ["b/two", "a/one"]
    ada = roster.split('data-student="ada"', 1)[1].split("</tr>", 1)[0]
    assert re.findall(r'title="([ab]/\w+):', ada) == ["b/two", "a/one"]
    summary = class_report.class_summary(hand_made_class(), {}, ["b/two", "a/one"])
    assert [ex["id"] for ex in summary["exercises"]] == ["b/two", "a/one"]
    # without a course.toml (the engine's test courses): id order
    assert [ex["id"] for ex in class_report.class_summary(hand_made_class(), {})["exercises"]] == \
        ["a/one", "b/two"]


def test_properties_with_the_same_rate_are_in_course_order():
    cls = {"x": student("x", T("a/one", "test_t1", "failed", counterexample=X),
                        T("b/two", "test_u1", "failed", counterexample=X))}
    rows = class_report.class_summary(cls, {}, ["b/two", "a/one"])["properties"]
    assert [r["exercise"] for r in rows] == ["b/two", "a/one"]


def test_shared_wrong_answers_are_words_not_json():
    """A rare wrong answer shared by two students reads like the rest of the page."""
    from grader.classroom import similarity

    got = tensor([2], [0.0, 1.0], dtype="float32")
    wrong = {"calls": [call(tensor([2], [0, 1]), 2)], "got": got, "expected": tensor([2], [0, 1]),
             "diff": {"kind": "dtype"}}
    cls = hand_made_class()
    for sid in ("bob", "cy"):
        for ex in cls[sid]["exercises"]:
            for t in ex["tests"]:
                if t["name"] == "test_t1":
                    t["counterexample"] = wrong
    found = similarity.analyse(cls, {}, {})
    assert found["behaviour"]["a/one"]["pairs"], "bob and cy share a rare wrong answer"
    page = class_report.render_html(cls, {}, REPO, similarity=found)
    section = unescape(re.sub(r"<[^>]+>", "", page.split('id="similarity"', 1)[1].split("</section>", 1)[0]))
    assert '"dtype"' not in section and "{" not in section and '"values"' not in section
    assert "returned <float32 tensor of shape (2,)> [0., 1.]" in " ".join(section.split())


def test_counts_have_the_right_plural():
    found = {"settings": {"k": 25, "threshold": 0.8, "min_match": 100},
             "code": {"a/one": {"students": 2, "pairs": 1, "median": 0.5, "flagged": 0, "top": []}},
             "behaviour": {}}
    page = class_report.render_html(hand_made_class(), {}, REPO, similarity=found)
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", page)).split())
    assert "code of 2 students compared (1 pair)" in text
    assert "1 pairs" not in text and "1 points" not in text


# ------------------------------------------------------------------ in Chinese

def test_the_class_report_speaks_chinese():
    from grader.classroom import similarity
    from grader.core.i18n import Lang

    cls = hand_made_class()
    found = similarity.analyse(cls, {}, {})
    english = class_report.render_html(cls, PROBLEMS, REPO, similarity=found)
    chinese = class_report.render_html(cls, PROBLEMS, REPO, similarity=found, lang=Lang.ZH_CN)
    assert '<html lang="en">' in english and '<html lang="zh-CN">' in chinese
    for heading in ("全班报告", "总分分布", "未通过的性质", "出错与超时", "相似度", "名单"):
        assert heading in chinese, heading
    for heading in ("Class report", "Distribution of totals", "Properties that fail", "Errors and timeouts",
                    "Static flags", "Not graded", "Roster", "students graded", "Made by torchdrill"):
        assert heading in english and heading not in chinese, heading
    # the charts' words too, drawn as text the browser renders with a CJK font
    assert "学生人数" in chinese and ">students<" in english
    assert "Noto Sans CJK SC" in chinese.split("<svg", 1)[1]
    assert chinese == class_report.render_html(cls, PROBLEMS, REPO, similarity=found, lang=Lang.ZH_CN)


# ------------------------------------------------------------------ in a term

def term_class() -> dict[str, Results]:
    """``hand_made_class`` in a term (one assignment, a/one, 10% a started day late; b/two in
    no assignment): ada late (14 graded, final 9 + 4 = 13), bob's a/one overridden to 10 (5
    graded, final 10), cy unchanged (0), dee's b/two overridden to what it was graded (2: the
    override changed nothing), eve late (5 graded, final 4.5). Her term as an older gradebook
    stored it: a zero difference written as -0.0."""
    from datetime import UTC, datetime, timedelta

    from grader.core.assignments import Assignment, Policy
    from grader.core.term_grades import Override, grade

    due = datetime(2026, 9, 14, 23, 59, tzinfo=UTC)
    week = (Assignment("w1", "Week 1", ("a/one",), due, UTC, policy=Policy("per_day", 10, 50)),)
    late = {"w1": ((due + timedelta(hours=5)).isoformat(), "--times")}
    cls = hand_made_class()
    overrides = {"bob": {"a/one": Override(10, "regrade", "prof", "2026-09-20T10:00:00+00:00")},
                 "dee": {"b/two": Override(2, "checked: right as graded", "prof", "2026-09-20T10:00:00+00:00")}}
    for sid, results in cls.items():
        results["term"] = grade(results, week, times=late if sid in ("ada", "eve") else None,
                                overrides=overrides.get(sid))
    eve = cls["eve"]["term"]
    eve["override"] = eve["assignments"][0]["override"] = -0.0
    return cls


FINALS = {"ada": 13, "bob": 10, "cy": 0, "dee": 2, "eve": 4.5}
RAWS = {"ada": 14, "bob": 5, "cy": 0, "dee": 2, "eve": 5}


def test_a_terms_final_grades_are_the_figures_with_raw_beside():
    s = class_report.class_summary(term_class(), {})
    t = s["totals"]
    assert t["scores"] == pytest.approx(list(FINALS.values()))
    assert t["mean"] == pytest.approx(29.5 / 5) and t["median"] == 4.5 and (t["min"], t["max"]) == (0, 13)
    raw = t["raw"]
    assert raw["scores"] == list(RAWS.values()) and raw["mean"] == pytest.approx(26 / 5) and raw["median"] == 5
    rows = by_id(s["students"])
    assert {sid: (r["score"], r["raw"]) for sid, r in rows.items()} == \
        {sid: (pytest.approx(FINALS[sid]), RAWS[sid]) for sid in FINALS}
    assert class_report.class_summary(hand_made_class(), {})["totals"]["raw"] is None  # no term: raw is the grade


def test_class_html_heads_with_the_final_grades_and_never_shows_minus_zero():
    page = class_report.render_html(term_class(), {}, REPO)
    figures = page.split('class="figures"')[1].split("</dl>")[0]
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", figures)).split())
    assert "mean final grade 5.9 / 14 raw points graded: 5.2" in text, text
    assert "median final grade 4.5 raw points graded: 5" in text, text
    assert "Distribution of final grades" in page and "Histogram of final grades of 5 students: mean 5.9" in page
    assert "raw points graded" in page.split('id="chart-totals"')[1].split("</figure>")[0]  # the legend
    roster = page.split('id="roster"')[1]
    cells = dict(re.findall(r'data-student="([^"]+)">\s*<td[^>]*>.*?</td>\s*<td class="num total" data-sort="([^"]+)"',
                            roster, flags=re.S))
    assert {sid: float(v) for sid, v in cells.items()} == pytest.approx(FINALS)
    assert "raw 14 of 14" in unescape(roster)
    words = unescape(re.sub(r"<[^>]+>", " ", page.split("<body>")[1]))
    assert not re.search(r"(?<![\w.])[-−]0(?![\w.])", words), re.findall(r".{40}[-−]0(?![\w.]).{10}", words)
    plain = class_report.render_html(hand_made_class(), {}, REPO)
    assert "mean total" in plain and "final grade" not in plain and "raw points graded" not in plain


def test_class_html_heads_with_the_final_grades_in_chinese():
    from grader.core.i18n import Lang

    page = class_report.render_html(term_class(), {}, REPO, lang=Lang.ZH_CN)
    figures = " ".join(unescape(re.sub(r"<[^>]+>", " ", page.split('class="figures"')[1].split("</dl>")[0])).split())
    assert "平均最终成绩 5.9" in figures and "原始评分：5.2" in figures, figures
    assert "最终成绩分布" in page and "final grade" not in page
