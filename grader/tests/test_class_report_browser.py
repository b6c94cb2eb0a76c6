"""The class report in a real browser: headless Chromium, offline.

Renders the hand-made class of ``test_class_report`` plus two students with
awkward ids (markup, and URL syntax: a space, ``#``, ``?``, ``%``), with a stub
report at ``students/<ID>/index.html`` for each, and checks what an instructor
would see and do: the page loads with no console errors (a CSP violation would
be one: the sort script runs only if its hash is right), the charts render, a
click on a roster header sorts the roster, and every student link opens that
student's report. Skips where there is no Chromium (see ``grader.tests.browser``).
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.core import results_json, syllabus
from grader.core.results_json import ExerciseInfo, Results
from grader.reports import class_report
from grader.tests.browser import Chromium, Page, find_chromium
from grader.tests.test_class_report import PROBLEMS, SCRIPT, T, X, hand_made_class, student

REPO = Path(__file__).resolve().parents[2]
MARKUP_ID = "<img src=x onerror=window.pwned=1>"
URL_ID = "a b#c?d%e"

pytestmark = [
    pytest.mark.skipif(find_chromium() is None,
                       reason="no Chromium on this machine (install Debian's 'chromium' "
                              "package, as .ci/run does)"),
    pytest.mark.xdist_group("browser"),
]


@pytest.fixture(scope="module")
def cls() -> dict[str, Results]:
    c = hand_made_class()
    c[MARKUP_ID] = student(MARKUP_ID, T("a/one", "test_t1", "error", counterexample=X,
                                        message=f"one() raised ValueError: {SCRIPT}"),
                           T("a/one", "test_t2", "passed"), exercises=("a/one",))
    c[URL_ID] = student(URL_ID, T("a/one", "test_t1", "passed"), T("a/one", "test_t2", "passed"),
                        T("b/two", "test_u1", "passed"), T("b/two", "test_u2", "failed"))
    return c


@pytest.fixture(scope="module")
def rendered(cls, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("class")
    for sid in cls:  # a stand-in for each student's own report
        folder = out / "students" / sid
        folder.mkdir(parents=True)
        (folder / "index.html").write_text(
            f"<!DOCTYPE html><title>report of {html.escape(sid)}</title>", encoding="utf-8")
    return class_report.write_class_report(cls, PROBLEMS, out, REPO)


@pytest.fixture(scope="module")
def browser() -> Iterator[Chromium]:
    with Chromium.launch() as b:
        yield b


@pytest.fixture(scope="module")
def page(browser, rendered) -> Page:
    return browser.open(rendered.as_uri(), width=1200, height=900)


def roster(page: Page, column: int) -> list[str]:
    return page.evaluate(f"""Array.from(document.querySelectorAll('#roster tbody tr'))
        .map(tr => tr.cells[{column}].getAttribute('data-sort'))""")


def click_header(page: Page, column: int) -> None:
    page.evaluate(f"document.querySelectorAll('#roster thead th')[{column}].querySelector('button').click()")


def test_page_loads_without_console_errors(page):
    assert page.evaluate("document.readyState") == "complete"
    assert page.evaluate("document.title").startswith("torchdrill: Class report")
    assert page.console_errors == []
    assert page.evaluate("document.scripts.length") == 1
    assert page.evaluate("window.pwned === undefined")  # the id's onerror never ran


def test_student_text_shows_as_text(page):
    text = page.evaluate("document.body.innerText")
    assert MARKUP_ID in text and SCRIPT in text and URL_ID in text


def test_charts_render(page):
    boxes = page.evaluate("""Array.from(document.querySelectorAll('figure.chart svg')).map(svg => {
        const r = svg.getBoundingClientRect();
        return {w: r.width, h: r.height, texts: svg.querySelectorAll('text').length,
                bars: svg.querySelectorAll('path').length};
    })""")
    assert len(boxes) == 3  # totals, a/one, b/two
    for box in boxes:
        assert box["w"] > 200 and box["h"] > 80, box
        assert box["texts"] >= 5 and box["bars"] >= 5, box


def test_roster_sorts_on_click(page, cls):
    ids = sorted(cls)
    assert roster(page, 0) == ids  # as written: by id
    totals = {sid: r["score"] for sid, r in cls.items()}
    click_header(page, 1)  # total, ascending
    shown = [float(x) for x in roster(page, 1)]
    assert shown == sorted(totals.values())
    assert page.evaluate("document.querySelectorAll('#roster thead th')[1].getAttribute('aria-sort')") \
        == "ascending"
    click_header(page, 1)  # again: descending
    assert [float(x) for x in roster(page, 1)] == sorted(totals.values(), reverse=True)
    click_header(page, 3)  # b/two: pending (cy) and missing (eve, the markup id) stay last
    column = roster(page, 3)
    scored = [float(x) for x in column if x]
    assert scored == sorted(scored) and column[len(scored):] == ["", "", ""]
    click_header(page, 0)
    assert roster(page, 0) == ids
    assert page.console_errors == []


def test_student_links_open_their_reports(browser, page, cls):
    links = page.evaluate("""Array.from(document.querySelectorAll('#roster tbody tr')).map(tr =>
        [tr.getAttribute('data-student'), tr.querySelector('a.sid').href])""")
    assert sorted(sid for sid, _ in links) == sorted(cls)
    for sid, href in links:
        assert href.endswith("/index.html") and "/students/" in href
        tab = browser.open(href)
        assert tab.evaluate("document.title") == f"report of {sid}", json.dumps([sid, href])


# ------------------------------------------------------------------ layout at 1280 px (issue 26)

@pytest.fixture(scope="module")
def big_page(browser, tmp_path_factory) -> Page:
    """This course's drills (its real ids, in course.toml's order), 30 students, two
    thirds of them with nothing done: the tallest bar of the histogram is at its left,
    up to the top, where a legend in the plot would sit."""
    ids = syllabus.load(REPO).ids
    exercises = {eid: ExerciseInfo(eid, 10 + 2 * (k % 3)) for k, eid in enumerate(ids)}
    cls = {}
    for s in range(30):
        tests = [T(eid, f"test_p{k}", "not_attempted" if s < 20 else
                   "passed" if (s + k + e) % 4 else "failed", counterexample=X)
                 for e, eid in enumerate(ids) for k in range(3)]
        cls[f"s{s:02d}-{'x' * (s % 7)}student"] = results_json.build(f"/subs/{s}", exercises, tests)
    out = tmp_path_factory.mktemp("big-class")
    return browser.open(class_report.write_class_report(cls, {}, out, REPO).as_uri(), width=1280, height=900)


def test_the_roster_fits_1280_px_across(big_page):
    sizes = big_page.evaluate("""(() => {
        const d = document.documentElement, table = document.querySelector('#roster'), wrap = table.parentElement;
        const clipped = Array.from(table.querySelectorAll('td, th button')).filter(
            e => e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1).length;
        return {page: [d.scrollWidth, d.clientWidth], wrap: [wrap.scrollWidth, wrap.clientWidth],
                columns: table.tHead.rows[0].cells.length, clipped: clipped};
    })()""")
    assert sizes["columns"] == 2 + len(syllabus.load(REPO).ids)
    assert sizes["page"][0] <= sizes["page"][1], f"the page scrolls sideways: {sizes}"
    assert sizes["wrap"][0] <= sizes["wrap"][1], f"the roster scrolls sideways: {sizes}"
    assert sizes["clipped"] == 0, "every score and every exercise's name is shown whole"


def test_the_roster_columns_are_in_course_order(big_page):
    shown = big_page.evaluate("Array.from(document.querySelectorAll('#roster th.ex')).map(th => th.dataset.exercise)")
    assert shown == syllabus.load(REPO).ids


def test_the_legend_never_covers_the_bars(big_page):
    boxes = big_page.evaluate("""(() => {
        const chart = document.querySelector('#chart-totals');
        const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
        return {legend: box(chart.querySelector('[id$="legend"]')),
                bars: Array.from(chart.querySelectorAll('[id*="bar-"]')).map(box).filter(b => b[3] - b[1] > 0.5)};
    })()""")
    legend, bars = boxes["legend"], boxes["bars"]
    assert bars and legend[2] - legend[0] > 20, boxes
    for bar in bars:
        apart = bar[2] <= legend[0] or legend[2] <= bar[0] or bar[3] <= legend[1] or legend[3] <= bar[1]
        assert apart, f"the legend {legend} covers the bar {bar}"
