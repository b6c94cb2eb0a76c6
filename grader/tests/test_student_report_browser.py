"""The student report in a real browser: headless Chromium, offline.

Renders the report of a mixed submission (passed, failed, error, timed out, not
attempted, not run here) and checks what a person would see: the page loads with
no console errors, the total shown is the total in results.json, every failed
property shows its counterexample, and the submission's ``<script>`` is text.
Screenshots (and a print to PDF) are saved in the test's tmp folder, and copied
to ``$TORCHDRILL_ARTIFACTS`` when that is set.

Needs Debian's ``chromium`` package (``/usr/bin/chromium``); skips where there is
no browser. Chromium is driven over ``--remote-debugging-pipe`` (see
``grader.tests.browser``): no extra Python package, no port, no network.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.core.results_json import Results
from grader.reports import counterexamples, present, student_report
from grader.tests.browser import Chromium, Page, find_chromium
from grader.tests.sample_results import SCRIPT, mixed_results, outcomes_in

REPO = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.skipif(find_chromium() is None,
                       reason="no Chromium on this machine (install Debian's 'chromium' "
                              "package, as .ci/run does)"),
    pytest.mark.xdist_group("browser"),  # one Chromium for the module under --dist loadgroup
]


def keep(path: Path) -> Path:
    """Copy an artifact to $TORCHDRILL_ARTIFACTS when set (CI uploads that folder)."""
    folder = os.environ.get("TORCHDRILL_ARTIFACTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, Path(folder) / path.name)
    return path


@pytest.fixture(scope="module")
def results() -> Results:
    return mixed_results()


@pytest.fixture(scope="module")
def rendered(results, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report")
    (out / "results.json").write_text(json.dumps(results, indent=1))
    return student_report.write_report(results, out, REPO)


@pytest.fixture(scope="module")
def page(rendered) -> Iterator[Page]:
    with Chromium.launch() as browser:
        yield browser.open(rendered.as_uri(), width=1200, height=900)


def test_page_loads_without_console_errors(page):
    assert page.evaluate("document.readyState") == "complete"
    assert page.evaluate("document.title").startswith("torchdrill: ")
    assert page.console_errors == []


def test_total_shown_equals_results_json(page, results):
    shown = page.evaluate("document.querySelector('[data-total]').textContent")
    assert shown == present.score_text(results["score"], results["max_score"])
    assert float(page.evaluate("document.querySelector('[data-total]').dataset.total")) == results["score"]
    assert page.evaluate("document.querySelector('#total').innerText").startswith(shown)


def test_every_failed_property_shows_a_counterexample(page, results):
    shown = page.evaluate("""Array.from(document.querySelectorAll('section[data-exercise] li.prop'))
        .map(li => ({exercise: li.closest('section').dataset.exercise, name: li.dataset.name,
                     outcome: li.dataset.outcome,
                     input: (li.querySelector('.counterexample .call-line') || {}).innerText || '',
                     visible: !!li.querySelector('.counterexample') &&
                              li.querySelector('.counterexample').getBoundingClientRect().height > 20}))""")
    problems = outcomes_in(results, "failed", "error", "timed_out")
    assert len([s for s in shown if s["outcome"] in ("failed", "error", "timed_out")]) == len(problems)
    by_key = {(s["exercise"], s["name"]): s for s in shown}
    for exercise, test in problems:
        s = by_key[(exercise, test["name"])]
        assert s["visible"], f"{exercise}::{test['name']} shows no counterexample"
        call = test["counterexample"]["calls"][0]
        assert s["input"] == counterexamples.call_text(call)


def test_submission_script_is_shown_as_text(page):
    assert page.evaluate("document.scripts.length") == 0
    assert page.evaluate("window.pwned === undefined")
    assert SCRIPT in page.evaluate("document.body.innerText")


def test_screenshot_and_print(page, rendered):
    shot = page.screenshot(rendered.parent / "report.png")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    keep(shot)
    pdf = rendered.parent / "report.pdf"
    pdf.write_bytes(base64.b64decode(page.send("Page.printToPDF", {"printBackground": True})["data"]))
    assert pdf.read_bytes()[:5] == b"%PDF-"
    keep(pdf)
    print(f"screenshot: {shot}\nprinted: {pdf}")


def test_fits_1280_px_across_and_the_not_run_box_says_only_why(page, rendered):
    tab = page.browser.open(rendered.as_uri(), width=1280, height=900)
    assert tab.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    box = tab.evaluate("document.querySelector('.notice.not_run').innerText")
    assert "(2 tests)" in box and "instructor's CUDA runner grades it" in box
    assert "reading your file" not in box and "tox" not in box
