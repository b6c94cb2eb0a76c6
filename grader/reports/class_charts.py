"""The class report's charts: matplotlib figures as inline SVG elements.

``charts`` draws the histogram of total scores and one small histogram per
exercise from the figures ``grader.reports.class_report.class_summary`` computed.
The same data gives the same bytes: a fixed ``svg.hashsalt``, no dates, text kept
as text, a font that ships with matplotlib, and every SVG id prefixed so several
figures share one page.
"""

from __future__ import annotations

import io
import re
from typing import TYPE_CHECKING, Any

from markupsafe import Markup, escape

from grader.reports import present

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

BLUE, GREY, INK, MUTED = "#0969da", "#8c959f", "#1f2328", "#59636e"
_RC: dict[RcKeyType, Any] = {
    "svg.hashsalt": "torchdrill-class-report",  # ids in the SVG from data, not from chance
    "svg.fonttype": "none",  # text stays text (searchable, small, font-independent bytes)
    "font.family": ["DejaVu Sans"],  # ships with matplotlib: same layout on every machine
    "font.size": 9,
    "text.parse_math": False,  # an exercise id with "$" is text, not TeX
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": MUTED,
    "axes.labelcolor": INK,
    "xtick.color": MUTED,
    "ytick.color": MUTED,
    "legend.frameon": False,
}
_IDS = re.compile(r'(\bid="|url\(#|xlink:href="#|\bhref="#)')


def charts(summary: dict[str, Any]) -> dict[str, Any]:
    """Inline SVGs: ``totals`` (the histogram of totals) and ``exercises`` (by id)."""
    import matplotlib

    with matplotlib.rc_context(_RC):
        out: dict[str, Any] = {"totals": _totals_chart(summary["totals"]), "exercises": {}}
        for k, ex in enumerate(summary["exercises"]):
            if ex["graded"]:
                out["exercises"][ex["id"]] = _exercise_chart(ex, f"ex{k}-")
    return out


def _figure(width: float, height: float, margins: dict[str, float]) -> Any:
    # A bare Figure, never pyplot: no global figure registry to leak into or close,
    # and no GUI backend (savefig picks the SVG canvas). Fixed margins, not a layout
    # engine: that would draw every figure twice.
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    fig.subplots_adjust(**margins)
    return fig


def _svg(fig: Any, prefix: str, label: str) -> Markup:
    """The figure as an ``<svg>`` element for inline use: no XML prologue, every
    id prefixed so that several figures on one page never share one."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = _IDS.sub(lambda m: m.group(1) + prefix, text)
    text = text.replace("<svg ", f'<svg role="img" aria-label="{escape(label)}" ', 1)
    return Markup(text.strip())


def _bins(top: float, count: int) -> list[float]:
    top = top if top > 0 else 1.0
    return [top * i / count for i in range(count + 1)]


def _totals_chart(totals: dict[str, Any]) -> Markup | None:
    scores = totals["scores"]
    if not scores:
        return None
    fig = _figure(7.2, 2.8, {"left": 0.08, "right": 0.985, "bottom": 0.16, "top": 0.87})
    ax = fig.add_subplot()
    top = max(totals["full_points"], max(scores))
    _, _, bars = ax.hist(scores, bins=_bins(top, 20), color=BLUE, edgecolor="white", linewidth=0.6)
    for k, bar in enumerate(bars):  # ids the browser test finds them by
        bar.set_gid(f"bar-{k}")
    ax.axvline(totals["mean"], color=INK, linestyle="--", linewidth=1,
               label=f"mean {present.number(totals['mean'])}")
    ax.axvline(totals["median"], color="#bc4c00", linestyle=":", linewidth=1.4,
               label=f"median {present.number(totals['median'])}")
    ax.set_xlim(0, top if top > 0 else 1)
    ax.set_xlabel(f"total points (of {present.number(totals['full_points'])})")
    ax.set_ylabel("students")
    _integer_counts(ax)
    # above the plot, never over the bars (they may be anywhere, up to the top)
    legend = ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.02), ncol=2, borderaxespad=0,
                       fontsize=8)
    legend.set_gid("legend")
    label = (f"Histogram of total scores of {len(scores)} students: mean "
             f"{present.number(totals['mean'])}, median {present.number(totals['median'])}")
    return _svg(fig, "totals-", label)


def _exercise_chart(ex: dict[str, Any], prefix: str) -> Markup:
    fig = _figure(3.2, 1.55, {"left": 0.1, "right": 0.97, "bottom": 0.25, "top": 0.95})
    ax = fig.add_subplot()
    stubs = ex["not_attempted"]
    # a stub scores 0: stubs are stacked in grey on the first bin
    ax.hist([ex["attempted_scores"], [0.0] * stubs], bins=_bins(ex["points"], 10), stacked=True,
            color=[BLUE, GREY], edgecolor="white", linewidth=0.5,
            label=["attempted", "not attempted"])
    ax.set_xlim(0, ex["points"] if ex["points"] > 0 else 1)
    ax.set_xlabel("points", fontsize=8, labelpad=1)
    ax.tick_params(labelsize=7.5, length=2.5)
    _integer_counts(ax)
    label = (f"Histogram of scores on {ex['id']} for {ex['graded']} students"
             + (f", {stubs} not attempted" if stubs else ""))
    return _svg(fig, prefix, label)


def _integer_counts(ax: Any) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=4))
