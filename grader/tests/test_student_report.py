"""The student report (index.html), the terminal table and ``torchdrill report``.

Everything is rendered from a results document built in-process
(``sample_results.mixed_results``): no grading, so these tests take a second.
"""

from __future__ import annotations

import io
import json
import re
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from grader import cli
from grader.core.errors import EXIT_OK, EXIT_USAGE
from grader.core.results_json import Results
from grader.reports import counterexamples, present, student_report, table
from grader.tests.sample_results import SCRIPT, mixed_results, outcomes_in

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def results() -> Results:
    return mixed_results()


@pytest.fixture(scope="module")
def html(results: Results) -> str:
    return student_report.render_html(results, REPO)


class Props(HTMLParser):
    """Collects each ``<li class="prop">``: its data attributes and the classes inside it."""

    def __init__(self) -> None:
        super().__init__()
        self.props: list[dict[str, Any]] = []
        self.exercise = ""
        self._depth = 0  # open <li> elements inside the current property

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "section" and a.get("data-exercise"):
            self.exercise = a["data-exercise"] or ""
        classes = set((a.get("class") or "").split())
        if tag == "li" and "prop" in classes:
            self.props.append({"exercise": self.exercise, "name": a.get("data-name"),
                               "outcome": a.get("data-outcome"), "classes": set(), "text": ""})
            self._depth = 1
        elif self._depth:
            self.props[-1]["classes"] |= classes
            self._depth += tag == "li"

    def handle_endtag(self, tag: str) -> None:
        if self._depth and tag == "li":
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._depth:
            self.props[-1]["text"] += data


def props_of(html: str) -> list[dict[str, Any]]:
    parser = Props()
    parser.feed(html)
    return parser.props


# ------------------------------------------------------------------ content

def test_one_card_per_exercise_with_spec_status_and_score(results, html):
    for ex in results["exercises"]:
        card = html.split(f'data-exercise="{ex["id"]}"', 1)[1].split("</section>", 1)[0]
        assert f'badge {ex["status"]}' in card
        assert present.label(ex["status"]) in card
        if ex["status"] != "not_run":
            assert present.score_text(ex["score"], ex["max_score"]) in card
    assert "One-hot encoding built with scatter_." in html


def test_every_property_is_listed_with_outcome_and_weight(results, html):
    shown = {(p["exercise"], p["name"]): p for p in props_of(html)}
    expected = {(ex["id"], t["name"]): t for ex in results["exercises"] for t in ex["tests"]}
    assert shown.keys() == expected.keys()
    for key, t in expected.items():
        assert shown[key]["outcome"] == t["outcome"]
        assert f"weight {present.number(t['weight'])}" in shown[key]["text"]


def test_failed_properties_show_counterexample_and_diff(results, html):
    shown = {(p["exercise"], p["name"]): p for p in props_of(html)}
    for eid, t in outcomes_in(results, "failed", "error", "timed_out"):
        p = shown[(eid, t["name"])]
        assert "counterexample" in p["classes"], t["name"]
        assert "call-line" in p["classes"], t["name"]
        assert present.first_line(t["message"]) in p["text"]
    one_hot = shown[("tensors/one_hot", "test_matches_f_one_hot")]
    assert {"compare", "diff", "chips", "values"} <= one_hot["classes"]
    assert "dtype differs: got float32, expected int64" in one_hot["text"]
    assert "shape (2, 3)" in one_hot["text"] and "stride (3, 1)" in one_hot["text"]
    attention = shown[("attention/sdpa", "test_matches_reference")]
    assert "6 of 6 elements differ" in attention["text"]
    assert "max absolute error" in attention["text"] and "first differing indices" in attention["text"]


def prop_html(html: str, name: str) -> str:
    return html.split(f'data-name="{name}"', 1)[1].split('<li class="prop"', 1)[0].split("</ol>")[0]


def test_first_differing_elements_are_highlighted(html):
    big = prop_html(html, "test_big")
    assert big.count("<mark>1.5</mark>") == 1 and big.count("<mark>1.</mark>") == 1


def test_long_tensors_are_elided(html):
    big = prop_html(html, "test_big")
    assert "..." in big and "middle values elided" in big
    assert "199." in big and "150." not in big


def test_errors_show_the_students_trimmed_traceback_and_output(html):
    error = prop_html(html, "test_negative_label_raises")
    assert 'class="traceback"' in error
    assert "Traceback (student code only):" in error and "line 9, in one_hot" in error
    assert "your code printed (stdout)" in error and "your code printed (stderr)" in error


def test_header_has_total_date_versions_suite_hash_and_not_run(results, html):
    total = re.search(r'data-total="([^"]+)" data-max="([^"]+)">([^<]+)<', html)
    assert total and float(total[1]) == results["score"] and float(total[2]) == results["max_score"]
    assert total[3] == present.score_text(results["score"], results["max_score"])
    assert results["graded_at"][:10] in html
    assert f"torchdrill {results['grader_version']}" in html
    assert "3f2a9c0d" in html
    header = html.split("</header>", 1)[0]
    assert "Not run here" in header and "needs a CUDA device" in header
    assert "cuda/pinned::test_overlap" in header and "tensors/one_hot::test_on_cuda" in header
    assert "4 points pending" in header


def test_not_attempted_exercise_says_so_once(html):
    card = html.split('data-exercise="autograd/linear"', 1)[1].split("</section>", 1)[0]
    assert "Not attempted yet." in card
    assert card.count("raised NotImplementedError") == 1


def test_hidden_properties_are_marked(html):
    big = prop_html(html, "test_big")
    assert "badge hidden" in big


# ------------------------------------------------------------------ safety, self-contained

def test_submission_strings_are_escaped(html):
    assert SCRIPT not in html
    assert "<script" not in html.lower()
    assert "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;" in html
    assert "<b>careful</b>" not in html and "&lt;b&gt;careful&lt;/b&gt;" in html


def test_a_script_could_not_run_even_if_escaping_failed(html):
    assert re.search(r'<meta http-equiv="Content-Security-Policy" content="default-src \'none\'', html)


def test_self_contained(html):
    assert "<link" not in html and "@import" not in html and "url(" not in html
    assert not re.search(r'(src|href)="(?!#)', html), "only in-page links"
    assert "<style>" in html and "@media print" in html


def test_renders_results_written_by_a_real_grading():
    """data/half_finished_results.json: ``torchdrill grade`` of a submission with a
    float one-hot, attention without the 1/sqrt(d_k) scaling, and the rest stubs."""
    results = json.loads((Path(__file__).parent / "data" / "half_finished_results.json").read_text())
    html = student_report.render_html(results, REPO)
    props = props_of(html)
    failed = [p for p in props if p["outcome"] == "failed"]
    assert failed and all("counterexample" in p["classes"] for p in failed)
    assert {p["outcome"] for p in props} == {"passed", "failed", "not_attempted", "not_run"}


def test_missing_template_is_a_clear_error(tmp_path):
    with pytest.raises(student_report.ReportError, match="report_templates/student.html.j2"):
        student_report.render_html(mixed_results(), tmp_path)


# ------------------------------------------------------------------ values as text

@pytest.mark.parametrize("values, shape, text", [
    (3, [], "3"),
    (1.0, [], "1."),
    ([], [0], "[]"),
    ([True, False], [2], "[ True, False]"),
    ([[0.0, 1.0], [1.0, 0.25]], [2, 2], "[[  0.,   1.],\n [  1., 0.25]]"),
    ([[[1, 2]], [[3, 4]]], [2, 1, 2], "[[[1, 2]],\n\n [[3, 4]]]"),
    ([0, 1, 2, "...", 7, 8, 9], [10], "[0, 1, 2, ..., 7, 8, 9]"),
])
def test_values_are_laid_out_like_torch(values, shape, text):
    assert counterexamples.values_text({"type": "tensor", "shape": shape, "values": values}) == text


def test_marked_indices_follow_the_values_not_the_elision():
    values = [[0, 1, 2, "...", 7, 8, 9], "...", [90, 91, 92, "...", 97, 98, 99]]
    cells = list(counterexamples.value_cells(values, [10, 10], {(0, 1), (0, 8), (9, 9)}))
    assert [text.strip() for text, hit in cells if hit] == ["1"]


def test_scores_are_never_rounded_up_to_the_maximum():
    assert present.score_text(9.999, 10) == "9.999 / 10"
    assert present.score_text(0.7692, 10) == "0.77 / 10"
    assert present.score_text(10, 10) == "10 / 10"


# ------------------------------------------------------------------ terminal

def test_table_is_plain_ascii_off_a_terminal(results):
    out = io.StringIO()
    table.render(results, file=out)
    text = out.getvalue()
    assert "\x1b[" not in text
    assert text.isascii(), "box characters in CI logs"
    assert "tensors/one_hot" in text and "pending" in text


def test_verbose_prints_counterexamples_as_plain_text(results):
    changed = json.loads(json.dumps(results))
    changed["exercises"][0]["tests"][0]["message"] = "[bold red]not markup[/bold red] :smile:"
    out = io.StringIO()
    table.render(changed, file=out, verbose=True)
    text = out.getvalue()
    assert "[bold red]not markup[/bold red] :smile:" in text
    assert "call: one_hot(<int64 tensor of shape (2,)>, 3)" in text
    assert "diff: dtype differs: got float32, expected int64" in text
    assert "Traceback (student code only):" in text
    assert SCRIPT in text  # a terminal shows it as the text it is
    assert "test_rows_sum_to_one" not in text.split("+\n", 3)[-1], "passed tests are not explained"


# ------------------------------------------------------------------ torchdrill report

def test_report_command_rerenders_from_results_json(results, tmp_path, monkeypatch, capsys):
    src = tmp_path / "graded"
    src.mkdir()
    (src / "results.json").write_text(json.dumps(results))
    out = tmp_path / "again"
    monkeypatch.chdir(REPO)
    code = cli.main(["report", str(src / "results.json"), "--out", str(out),
                     "--format", "gradescope", "--junit", str(tmp_path / "junit.xml")])
    printed = capsys.readouterr().out
    assert code == EXIT_OK
    assert f"report: {out / 'index.html'}" in printed
    assert (out / "index.html").read_text() == student_report.render_html(results, REPO)
    assert (out / "gradescope" / "results.json").is_file() and (tmp_path / "junit.xml").is_file()
    assert "tensors/one_hot" in printed  # the table, too


def test_report_command_writes_beside_results_by_default(results, tmp_path, capsys):
    (tmp_path / "results.json").write_text(json.dumps(results))
    assert cli.main(["report", str(tmp_path / "results.json"), "--course", str(REPO)]) == EXIT_OK
    assert (tmp_path / "index.html").is_file()


def test_report_command_explains_what_is_missing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["report", str(tmp_path / "nothing.json")]) == EXIT_USAGE
    assert "cannot read" in capsys.readouterr().err
    (tmp_path / "results.json").write_text(json.dumps(mixed_results()))
    assert cli.main(["report", str(tmp_path / "results.json")]) == EXIT_USAGE
    assert "--course" in capsys.readouterr().err
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text("")
    assert cli.main(["report", str(tmp_path / "results.json")]) == EXIT_USAGE
    assert "report_templates/student.html.j2" in capsys.readouterr().err


# ------------------------------------------------------------------ static scan flags

FLAG_CODE = "return F.one_hot(x)  # <script>alert('flag')</script>"


def flagged(results: Results) -> Results:
    """``results`` with two static-scan flags on tensors/one_hot (one hostile)."""
    changed = json.loads(json.dumps(results))
    one_hot = next(e for e in changed["exercises"] if e["id"] == "tensors/one_hot")
    one_hot["static_flags"] = [
        {"name": "F.one_hot", "line": 12, "col": 12, "code": FLAG_CODE, "indirect": False},
        {"name": "F.one_hot", "line": 3, "col": 5, "code": "m = importlib.import_module('torch')",
         "indirect": True}]
    return changed


def test_static_flags_show_on_their_card_escaped_and_cost_nothing(results):
    changed = flagged(results)
    html = student_report.render_html(changed, REPO)
    card = html.split('data-exercise="tensors/one_hot"', 1)[1].split("</section>", 1)[0]
    text = re.sub(r"<[^>]+>", "", card)
    assert "static scan: F.one_hot at line 12: return F.one_hot(x)  # &lt;script&gt;" in text
    assert "static scan: F.one_hot at line 3 (imported dynamically)" in text
    assert "costs no points" in text
    assert "<script" not in html.lower()
    assert html.count('class="static-flags"') == 1, "only the flagged exercise shows the box"
    assert props_of(html) == props_of(student_report.render_html(results, REPO)), "properties unchanged"
    assert 'class="static-flags"' not in student_report.render_html(results, REPO)


def test_static_flags_are_marked_in_the_verbose_table_only(results):
    changed = flagged(results)
    next(e for e in changed["exercises"] if e["id"] == "tensors/one_hot")["static_flags"][0]["code"] = \
        "[bold]not markup[/bold]"
    plain, verbose = io.StringIO(), io.StringIO()
    table.render(changed, file=plain)
    table.render(changed, file=verbose, verbose=True)
    assert "static" not in plain.getvalue()
    text = verbose.getvalue()
    assert "[2 static flags]" in text
    assert "tensors/one_hot: static scan: F.one_hot at line 12: [bold]not markup[/bold]" in text


# ------------------------------------------------------------------ reads like a product (issue 26)

def header_of(html: str) -> str:
    return html.split("</header>", 1)[0]


def test_the_environment_is_told_in_words_never_as_a_dict(results):
    """budgets, grading, examples and isolation as a grading writes them: sentences."""
    changed = json.loads(json.dumps(results))
    changed["environment"].update({
        "workers": 2, "shrink": True,
        "isolation": {"mode": "sandbox", "layers": {"bwrap": "on", "landlock": "on"}, "missing": []},
        "examples": {"drawn": "secret", "secret": "ab12cd34", "widened": 2.0},
        "budgets": {"drills": {"tensors/one_hot": 41.2, "attention/sdpa": 180.0}, "factor": 10.0,
                    "margin_s": 30.0, "source": {"tensors/one_hot": "reference",
                                                 "attention/sdpa": "no reference time"}},
        "grading": {"worker": "local-3", "cuda_worker": "gpu-1"}})
    meta = header_of(student_report.render_html(changed, REPO)).split('<dl class="meta">', 1)[1].split("</dl>", 1)[0]
    text = unescape(re.sub(r"<[^>]+>", " ", meta))
    for raw in ("{", "}", "[", "]", "True", "False", "':", '":'):
        assert raw not in text, f"{raw!r} in {text!r}"
    words = " ".join(text.split())
    assert "time budgets 2 drills, 221 s in all (10× the reference's time + 30 s; 1 drill without a " \
           "reference time)" in words
    assert "graded on local-3; cuda tests on gpu-1" in words
    assert "examples official: drawn from the course secret ab12cd34, ranges 2× wider" in words
    assert "isolation sandbox: bwrap on, landlock on" in words
    assert "CUDA not available" in words and "workers 2 in parallel" in words


def test_environment_items_never_show_a_repr():
    items = present.environment_items({"odd": {"a": [1, 2], "b": {"c": True}}, "empty": {},
                                       "examples": {"drawn": "public"}})
    assert items == [("odd", "a 1, 2, b c yes"), ("examples", "public (the ones in your tests)")]


def test_the_not_run_box_holds_the_reason_only_and_no_tox_advice(results, html):
    """The static scan's note belongs to flagged cards, not to the CUDA box; a student is
    never told to run ``tox -e cuda`` (that grades the reference, not their work)."""
    box = html.split('<div class="notice not_run">', 1)[1].split("</div>", 1)[0]
    assert "static scan" not in box and "reading your file" not in box
    assert "tox" not in html
    assert "your instructor&#39;s CUDA runner grades it" in box
    assert "reading your file" not in html, "no flags here, so no static-scan note anywhere"


def test_counts_have_the_right_plural(results):
    one = json.loads(json.dumps(results))
    for ex in one["exercises"]:  # keep a single test not run here
        ex["tests"] = [t for t in ex["tests"] if t["name"] != "test_on_cuda"]
    one["exercises"] = [e for e in one["exercises"] if e["tests"]]
    html = student_report.render_html(one, REPO)
    box = " ".join(re.sub(r"<[^>]+>", " ", html.split('<div class="notice not_run">', 1)[1]
                          .split("</div>", 1)[0]).split())
    assert "(1 test)" in box and "1 tests" not in html
    assert "(2 tests)" in header_of(student_report.render_html(results, REPO))
    assert "1 points" not in html and "1 pts" not in html
    assert [present.plural(n, w) for n, w in [(1, "test"), (2, "test"), (1, "pair"), (3, "pair"),
                                              (1, "property"), (2, "property"), (0, "item"),
                                              (2.5, "point")]] == \
        ["1 test", "2 tests", "1 pair", "3 pairs", "1 property", "2 properties", "0 items", "2.5 points"]


def test_a_length_mismatch_says_item_for_one():
    from grader.contract.expect import Mismatch, assert_same

    with pytest.raises(Mismatch, match=r"expected 1 item, got 2"):
        assert_same([1, 2], [1])
    with pytest.raises(Mismatch, match=r"expected 2 items, got 1"):
        assert_same([1], [1, 2])


def test_results_written_before_say_the_new_reason_too(results):
    """A results.json from an older grading still told students to run tox -e cuda."""
    old = json.loads(json.dumps(results).replace(
        present.CUDA_REASON, "needs a CUDA device; this runner has none (run tox -e cuda on a CUDA machine)"))
    html = student_report.render_html(old, REPO)
    assert "tox" not in html and html.count("your instructor&#39;s CUDA runner grades it") == 1 + 2


# ------------------------------------------------------------------ several mistakes

def _one_hot(results: Results) -> Any:
    return next(ex for ex in results["exercises"] if ex["id"] == "tensors/one_hot")


def _several_reasons(results: Results) -> Results:
    """one_hot loses properties for three reasons; the heaviest (weight 4) is neither
    the first in the file nor the first by name, and a fourth property fails for the
    same reason as the first one."""
    changed = json.loads(json.dumps(results))
    one_hot = _one_hot(changed)
    by_name = {t["name"]: t for t in one_hot["tests"]}
    by_name["test_matches_f_one_hot"]["weight"] = 1
    by_name["test_negative_label_raises"]["weight"] = 4
    twin = dict(by_name["test_matches_f_one_hot"], name="test_dtype_is_int64", weight=2)
    one_hot["tests"].append(twin)
    return changed


def test_the_summary_names_the_heaviest_lost_property_and_counts_the_other_reasons(results):
    changed = _several_reasons(results)
    one_hot = _one_hot(changed)
    assert present.main_problem(one_hot)["name"] == "test_negative_label_raises"
    found = present.reasons(one_hot)
    assert [g["reason"].split(":")[0] for g in found] == ["one_hot() raised RuntimeError", "result",
                                                          "the test ran past its 120 s limit"]
    assert [t["name"] for t in found[1]["tests"]] == ["test_dtype_is_int64", "test_matches_f_one_hot"]
    out = io.StringIO()
    table.render(changed, file=out, width=200)
    row = next(line for line in out.getvalue().splitlines() if "tensors/one_hot" in line)
    assert "test_negative_label_raises (error) + 2 other reasons" in row, row
    assert "heaviest failing property" in out.getvalue()


def test_each_distinct_reason_is_listed_in_the_verbose_table_and_by_check(results):
    changed = _several_reasons(results)
    out = io.StringIO()
    table.render(changed, file=out, width=200, verbose=True)
    text = out.getvalue()
    heading = ("tensors/one_hot: lost for 3 reasons, heaviest first (properties that failed with the "
               "same difference are one reason):")
    assert heading in text
    listed = text.split(heading, 1)[1]
    first, second, third = (listed.index(f"  {n}. ") for n in (1, 2, 3))
    assert first < second < third
    assert "one_hot() raised RuntimeError: index -1 is out of bounds" in listed[first:second]
    assert "result: dtype differs" in listed[second:third]
    assert "lost: test_dtype_is_int64 (weight 2), test_matches_f_one_hot (weight 1)" in listed[second:third]
    assert "the test ran past its 120 s limit" in listed[third:]
    # the properties that failed with the very same text are still explained once
    assert "the same on 1 more property: test_matches_f_one_hot" in text
    # an exercise that lost for one reason only gets no list
    assert "basics/stack: " not in text.replace("basics/stack::", "")

    from grader.learner import check
    console = table.make_console(io.StringIO(), width=200)
    check.print_check(None, _one_hot(changed), console, 1.0)  # type: ignore[arg-type]
    said = console.file.getvalue()  # type: ignore[attr-defined]
    assert heading in said
    assert said.index("test_negative_label_raises") < said.index("test_matches_f_one_hot")


def test_the_student_report_lists_each_reason_and_names_the_heaviest(results):
    page = student_report.render_html(_several_reasons(results), REPO)
    overview = page.split('<table class="overview">', 1)[1].split("</table>", 1)[0]
    row = overview.split("tensors/one_hot", 1)[1].split("</tr>", 1)[0]
    assert "negative label raises" in row and "and 2 other reasons" in row and "matches f one hot" not in row
    card = page.split('data-exercise="tensors/one_hot"', 1)[1].split("</section>", 1)[0]
    box = card.split('<div class="reasons">', 1)[1].split("</div>", 1)[0]
    assert "Lost for 3 reasons" in box and "a mistake of its own" not in page
    assert "two reasons may still have one cause" in box, "no independence is claimed that is not measured"
    items = re.findall(r'<li class="reason">(.*?)</li>', box, re.S)
    assert len(items) == 3
    assert "one_hot() raised RuntimeError" in unescape(items[0]) and "weight 4" in items[0]
    assert "result: dtype differs" in unescape(items[1]) and "dtype is int64" in items[1]
    assert "ran past its 120 s limit" in items[2]
    assert [p["name"] for p in props_of(page) if p["exercise"] == "tensors/one_hot"][:2] == \
        ["test_negative_label_raises", "test_dtype_is_int64"]  # heaviest first in the card too
    sdpa = page.split('data-exercise="basics/stack"', 1)[1].split("</section>", 1)[0]
    assert '<div class="reasons">' not in sdpa  # one reason: no list


def test_properties_lost_to_one_difference_are_one_reason_in_the_report_and_the_table(results):
    """Two properties that show the same kept difference (a dtype got X expected Y), the
    heavier one stopped by it: one reason, named by the property that failed of its own,
    in the card and in the verbose table; no list when one property was lost."""
    from grader.core.i18n import Lang, Message

    changed = json.loads(json.dumps(results))
    one_hot = _one_hot(changed)
    one_hot["tests"] = [t for t in one_hot["tests"] if t["name"] in ("test_matches_f_one_hot", "test_rows_sum_to_one")]
    own = next(t for t in one_hot["tests"] if t["name"] == "test_matches_f_one_hot")
    said = {"what": "result", "got": "torch.float32", "expected": "torch.int64"}
    own["message_id"] = Message("{what}: dtype differs: got {got}, expected {expected}", said).to_json()
    stopped = dict(own, name="test_labels_are_left_unchanged", weight=5,
                   message="stopped by another defect: one_hot of labels: dtype differs: got torch.float32, "
                           "expected torch.int64",
                   message_id=Message("stopped by another defect: {what}: dtype differs: got {got}, expected "
                                      "{expected}", dict(said, what="one_hot of labels")).to_json())
    one_hot["tests"].append(stopped)
    for lang, heading, reason in ((Lang.EN, "Lost for one reason", "result: dtype differs"),
                                  (Lang.ZH_CN, "失分原因只有一个", "：dtype 不同：得到 torch.float32")):
        card = student_report.render_html(changed, REPO, lang).split(
            'data-exercise="tensors/one_hot"', 1)[1].split("</section>", 1)[0]
        box = card.split('<div class="reasons">', 1)[1].split("</div>", 1)[0]
        assert heading in box and reason in unescape(box), box
        assert len(re.findall(r'<li class="reason">', box)) == 1
    out = io.StringIO()
    table.render(changed, file=out, width=200, verbose=True)
    text = out.getvalue()
    assert "tensors/one_hot: lost for one reason, the same difference in 2 properties:" in text
    row = next(line for line in text.splitlines() if "| tensors/one_hot" in line)
    assert "  1. result: dtype differs" in text and "other reason" not in row, row
    one_hot["tests"].remove(stopped)
    out = io.StringIO()
    table.render(changed, file=out, width=200, verbose=True)
    assert "lost for one reason" not in out.getvalue()


# ------------------------------------------------------------------ in Chinese

ENGLISH_HEADINGS = ("grading report", "Smallest failing input", "Expected vs got", "Your code raised",
                    "Each exercise is checked by properties", "main problem", "Not attempted yet",
                    "your file:", "Re-render it with", "of the points graded here", "test suite")


def test_the_report_speaks_chinese(results):
    from grader.core.i18n import Lang

    english = student_report.render_html(results, REPO)
    chinese = student_report.render_html(results, REPO, Lang.ZH_CN)
    assert '<html lang="en">' in english and '<html lang="zh-CN">' in chinese
    for heading in ("评分报告", "最小的失败输入", "期望值与实际值", "你的代码抛出了异常", "主要问题", "尚未作答"):
        assert heading in chinese
    for heading in ENGLISH_HEADINGS:
        assert heading in english and heading not in chinese, heading
    def shape(html: str) -> list[dict]:
        return [{k: v for k, v in p.items() if k != "text"} for p in props_of(html)]
    assert shape(chinese) == shape(english), "the same properties, outcomes and classes"
    assert '"Noto Sans CJK SC"' in chinese, "the font stacks have CJK fonts after the Latin ones"
    assert english == student_report.render_html(results, REPO), "one environment per language, unchanged"


def test_report_command_rerenders_in_either_language(results, tmp_path, monkeypatch, capsys):
    (tmp_path / "results.json").write_text(json.dumps(results))
    monkeypatch.chdir(REPO)
    page = tmp_path / "index.html"
    assert cli.main(["report", str(tmp_path / "results.json"), "--lang", "zh_CN"]) == EXIT_OK
    chinese = page.read_text()
    assert '<html lang="zh-CN">' in chinese and "评分报告" in chinese
    assert "权重最大的未通过性质" in capsys.readouterr().out  # the table, in the command's language
    assert cli.main(["report", str(tmp_path / "results.json"), "--lang", "en"]) == EXIT_OK
    assert page.read_text() == student_report.render_html(results, REPO)
    assert "heaviest failing property" in capsys.readouterr().out


def test_the_score_table_speaks_the_commands_language(results):
    from grader.core import i18n

    out = io.StringIO()
    with i18n.speaking(i18n.Lang.ZH_CN):
        table.render(results, file=out, verbose=True)
    text = out.getvalue()
    assert "权重最大的未通过性质" in text and "总计" in text
    assert "heaviest failing property" not in text and "reasons, heaviest first" not in text


def test_a_kept_message_is_rendered_in_the_reports_language(results):
    """A message kept as an id (``message_id``) reads in the report's language."""
    from grader.core.i18n import Lang, Message

    changed = json.loads(json.dumps(results))
    test = next(t for ex in changed["exercises"] for t in ex["tests"] if t["outcome"] == "not_run")
    test["message"] = "2 of 3 elements differ"
    test["message_id"] = Message("{n} of {total} elements differ", {"n": 2, "total": 3}).to_json()
    assert "2 of 3 elements differ" in student_report.render_html(changed, REPO)
    chinese = student_report.render_html(changed, REPO, Lang.ZH_CN)
    assert "3 个元素中有 2 个不同" in chinese and "2 of 3 elements differ" not in chinese


# ------------------------------------------------------------------ in a term

def with_term(results: Results, override_points: float) -> Results:
    """``results`` in a term of no assignment, its basics/stack drill overridden to
    ``override_points`` (it was graded 3 × 3/4 = 2.25)."""
    from grader.core.term_grades import Override, grade

    results = json.loads(json.dumps(results))
    results["term"] = grade(results, (), overrides={
        "basics/stack": Override(override_points, "regrade request", "prof", "2026-11-23T09:00:00+00:00")})
    return results


def test_in_a_term_the_final_grade_is_the_headline_and_raw_points_are_below(results):
    from grader.core.i18n import Lang

    term = with_term(results, 3)
    html = student_report.render_html(term, REPO)
    top = html.split('<header class="top">')[1].split('<section class="term"')[0]
    final = present.number(term["term"]["final"])
    headline = re.search(r'<div class="total-num" id="total">(.*?)</div>', top, re.S)
    assert headline and f"Your grade: {final} points" in unescape(re.sub(r"<[^>]+>", "", headline[1]))
    raw = re.search(r'<div class="total-raw">(.*?)</div>', top, re.S)
    assert raw and f"{present.score_text(results['score'], results['max_score'])} points graded" in \
        unescape(re.sub(r"<[^>]+>", "", raw[1]))
    assert top.index('id="total"') < top.index('class="total-raw"')
    assert f"<title>torchdrill: {final} points" in html
    chinese = student_report.render_html(term, REPO, Lang.ZH_CN)
    assert f"你的成绩：{final} 分" in chinese.split('id="total"')[1].split("</div>")[0]
    assert "已评分" in chinese.split('class="total-raw"')[1].split("</div>")[0]
    plain = student_report.render_html(results, REPO)  # no term: the points graded are the grade
    assert "Your grade" not in plain and 'class="total-raw"' not in plain


def test_an_override_that_changed_nothing_never_shows_minus_zero(results):
    from grader.core.i18n import Lang
    from grader.reports import term_view

    term = with_term(results, 2.25)  # what it was graded
    term["term"]["override"] = term["term"]["assignments"][0]["override"] = -0.0  # as an older gradebook kept it
    term["term"]["history"] = [{"at": "2026-11-23T09:00:00+00:00", "raw": 1.0, "penalty": -0.0, "override": -1e-12,
                                "final": -0.0, "why": "graded"}]
    for lang in (Lang.EN, Lang.ZH_CN):
        html = student_report.render_html(term, REPO, lang)
        words = unescape(re.sub(r"<[^>]+>", " ", html.split("<body>")[1]))
        assert not re.search(r"(?<![\w.])[-−]0(?![\w.])", words), re.findall(r".{40}[-−]0(?![\w.]).{10}", words)
    assert not any(re.search(r"(?<![\w.])-0(?![\w.])", line) for line in term_view.summary_lines(term["term"]))
