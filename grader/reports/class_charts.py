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

from grader.core import i18n
from grader.reports import present

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

CJK_FONTS = ["PingFang SC", "Hiragino Sans GB", "Noto Sans CJK SC", "Source Han Sans SC",
             "Microsoft YaHei"]
BLUE, GREY, INK, MUTED = "#0969da", "#8c959f", "#1f2328", "#59636e"
_RC: dict[RcKeyType, Any] = {
    "svg.hashsalt": "torchdrill-class-report",  # ids in the SVG from data, not from chance
    "svg.fonttype": "none",  # text stays text (searchable, small, font-independent bytes)
    # DejaVu Sans ships with matplotlib: the same layout on every machine. The SVG keeps its
    # text as text, so the browser draws it: the CJK families after it give Chinese labels a glyph.
    "font.family": ["DejaVu Sans", *CJK_FONTS],
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


def charts(summary: dict[str, Any], t: i18n.Translator | None = None) -> dict[str, Any]:
    """Inline SVGs: ``totals`` (the histogram of totals) and ``exercises`` (by id), their
    words in ``t``'s language (English by default)."""
    import logging
    import warnings

    import matplotlib

    t = t or i18n.translator(i18n.Lang.EN)
    # matplotlib warns once per missing family while it lays text out; the families after
    # DejaVu Sans are for the browser (the SVG's font-family), not for matplotlib
    font_log = logging.getLogger("matplotlib.font_manager")
    level = font_log.level
    font_log.setLevel(logging.ERROR)
    try:
        with matplotlib.rc_context(_RC), warnings.catch_warnings():
            # the text is laid out with DejaVu Sans, which has no CJK glyph: the browser draws them
            warnings.filterwarnings("ignore", message=r"Glyph \d+ .* missing from font")
            out: dict[str, Any] = {"totals": _totals_chart(summary["totals"], t), "exercises": {}}
            for k, ex in enumerate(summary["exercises"]):
                if ex["graded"]:
                    out["exercises"][ex["id"]] = _exercise_chart(ex, f"ex{k}-", t)
    finally:
        font_log.setLevel(level)
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


def _totals_chart(totals: dict[str, Any], t: i18n.Translator) -> Markup | None:
    """The histogram of the students' grades: their totals, or in a term (``totals["raw"]``)
    their final points, with the raw points graded as an outline over them."""
    scores = totals["scores"]
    if not scores:
        return None
    raw = totals.get("raw")
    fig = _figure(7.2, 2.8, {"left": 0.08, "right": 0.985, "bottom": 0.16, "top": 0.87})
    ax = fig.add_subplot()
    top = max(totals["full_points"], max(scores), *(raw["scores"] if raw else ()))
    _, _, bars = ax.hist(scores, bins=_bins(top, 20), color=BLUE, edgecolor="white", linewidth=0.6,
                         label=t.gettext("final grade") if raw else None)
    for k, bar in enumerate(bars):  # ids the browser test finds them by
        bar.set_gid(f"bar-{k}")
    if raw:
        ax.hist(raw["scores"], bins=_bins(top, 20), histtype="step", color=MUTED, linewidth=1.1,
                label=t.gettext("raw points graded"))
    ax.axvline(totals["mean"], color=INK, linestyle="--", linewidth=1,
               label=t.gettext("mean {value}", value=present.number(totals["mean"])))
    ax.axvline(totals["median"], color="#bc4c00", linestyle=":", linewidth=1.4,
               label=t.gettext("median {value}", value=present.number(totals["median"])))
    ax.set_xlim(0, top if top > 0 else 1)
    full = present.number(totals["full_points"])
    ax.set_xlabel(t.gettext("final points (of {points})", points=full) if raw else
                  t.gettext("total points (of {points})", points=full))
    ax.set_ylabel(t.gettext("students"))
    _integer_counts(ax)
    # above the plot, never over the bars (they may be anywhere, up to the top)
    legend = ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.02), ncol=4 if raw else 2, borderaxespad=0,
                       fontsize=8)
    legend.set_gid("legend")
    label = (t.gettext("Histogram of final grades of {n} students: mean {mean}, median {median} (raw points "
                       "graded: mean {raw_mean}, median {raw_median})", n=len(scores),
                       mean=present.number(totals["mean"]), median=present.number(totals["median"]),
                       raw_mean=present.number(raw["mean"]), raw_median=present.number(raw["median"]))
             if raw else
             t.gettext("Histogram of total scores of {n} students: mean {mean}, median {median}",
                       n=len(scores), mean=present.number(totals["mean"]),
                       median=present.number(totals["median"])))
    return _svg(fig, "totals-", label)


def _exercise_chart(ex: dict[str, Any], prefix: str, t: i18n.Translator) -> Markup:
    fig = _figure(3.2, 1.55, {"left": 0.1, "right": 0.97, "bottom": 0.25, "top": 0.95})
    ax = fig.add_subplot()
    stubs = ex["not_attempted"]
    # a stub scores 0: stubs are stacked in grey on the first bin
    ax.hist([ex["attempted_scores"], [0.0] * stubs], bins=_bins(ex["points"], 10), stacked=True,
            color=[BLUE, GREY], edgecolor="white", linewidth=0.5,
            label=[t.gettext("attempted"), t.gettext("not attempted")])
    ax.set_xlim(0, ex["points"] if ex["points"] > 0 else 1)
    ax.set_xlabel(t.gettext("points"), fontsize=8, labelpad=1)
    ax.tick_params(labelsize=7.5, length=2.5)
    _integer_counts(ax)
    label = (t.gettext("Histogram of scores on {drill} for {n} students, {stubs} not attempted",
                       drill=ex["id"], n=ex["graded"], stubs=stubs) if stubs else
             t.gettext("Histogram of scores on {drill} for {n} students", drill=ex["id"], n=ex["graded"]))
    return _svg(fig, prefix, label)


def _integer_counts(ax: Any) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=4))
