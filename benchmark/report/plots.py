"""The report's plots, each a pure function from aggregated tables to PNG bytes.

Figures are drawn with matplotlib's object API on the Agg canvas (no pyplot state, no display)
and saved without a timestamp, so the same tables give the same bytes. Colours come from the
Okabe-Ito palette (told apart with any of the common colour-vision deficiencies); a point or bar
that stands for a variant is labelled with the variant's full name (``finder+source+selector``).
"""
from __future__ import annotations

import io
from collections import Counter
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties

from benchmark.report.aggregate import _columns, as_array, float_or_nan, picked

#: Okabe-Ito: black, orange, sky blue, bluish green, yellow, blue, vermillion, reddish purple
OKABE_ITO = ["#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7"]
#: one colour per guess class (the classes of benchmark.metrics; an unknown class is drawn grey)
COLORS = {"grounded": "#009E73", "lucky_guess": "#E69F00", "misread": "#CC79A7", "retrieval_miss": "#999999",
          "extraction_error": "#56B4E9", "abstained_appropriate": "#0072B2", "abstained_miss": "#F0E442",
          "error": "#000000"}
#: a legend beside the axes, where it hides no point (and "best" need not search among thousands of them)
OUTSIDE = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "borderaxespad": 0.0}
#: lines and points by answerer: Okabe-Ito without black and yellow (too light on white)
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#56B4E9", "#E69F00", "#000000"]
#: markers by answerer, so that the answerers differ in shape as well as in colour
MARKERS = ["o", "s", "^", "D", "v", "P", "X"]


def _png(fig: Figure, margins: tuple[float, float, float, float] | None = None) -> bytes:
    """The figure as PNG bytes, laid out by matplotlib's tight layout, or with ``margins`` (left, right,
    bottom, top, in inches) where the caller knows them: measuring every tick label of a large figure
    costs more than drawing it."""
    FigureCanvasAgg(fig)
    if margins is None:
        fig.set_layout_engine("tight")  # one draw (bbox_inches="tight" would draw twice)
    else:
        width, height = fig.get_size_inches()
        left, right, bottom, top = margins
        fig.subplots_adjust(left=left / width, right=1 - right / width, bottom=bottom / height, top=1 - top / height)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, metadata={"Software": None})
    return buf.getvalue()


def _inside(artists: Any) -> None:
    """Leave artists drawn inside the axes out of the layout's measuring (the axes already bound them):
    measuring every bar or thousands of points is most of the cost of laying a figure out."""
    for artist in artists if isinstance(artists, (list, tuple)) or hasattr(artists, "patches") else [artists]:
        artist.set_in_layout(False)


def _text_inches(fig: Figure, texts: list[str], size: float) -> float:
    """Width in inches of the widest of ``texts`` at font ``size`` (points), as the figure draws it."""
    renderer = fig.canvas.get_renderer()
    prop = FontProperties(size=size)
    widest = max((renderer.get_text_width_height_descent(t, prop, ismath=False)[0] for t in texts), default=0.0)
    return widest / renderer.points_to_pixels(72)


def _num(v: Any) -> float:
    return float("nan") if v is None else float(v)


def accuracy_vs_grounded(summary: pd.DataFrame, floor: float | None = None) -> bytes:
    """Per answerer, one bar per variant: grounded accuracy plus lucky guesses stacked to the accuracy."""
    answerers = list(dict.fromkeys(summary["answerer"]))
    variants = list(dict.fromkeys(summary["variant"]))
    fig = Figure(figsize=(4.2 * max(1, len(answerers)), 0.42 * len(variants) + 1.6))
    axes = fig.subplots(1, max(1, len(answerers)), sharey=True, squeeze=False)[0]
    y = np.arange(len(variants))
    for ax, answerer in zip(axes, answerers):
        m = summary[summary["answerer"] == answerer].set_index("variant").reindex(variants)
        grounded = np.array([_num(v) for v in m["grounded_accuracy"]])
        acc = np.array([_num(v) for v in m["accuracy"]])
        _inside(ax.barh(y, np.nan_to_num(grounded), color=COLORS["grounded"], label="grounded"))
        _inside(ax.barh(y, np.nan_to_num(acc - grounded), left=np.nan_to_num(grounded), color=COLORS["lucky_guess"],
                        label="lucky guess"))
        if floor is not None:
            ax.axvline(floor, color="black", linestyle="--", linewidth=1, label="guessability floor")
        ax.set_xlim(0, 1)
        ax.set_title(answerer)
        ax.set_xlabel("accuracy")
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(y, variants)
    axes[0].invert_yaxis()
    axes[-1].legend(loc="lower right", fontsize=8)
    fig.suptitle("Accuracy = grounded answers + lucky guesses")
    FigureCanvasAgg(fig)
    labels = _text_inches(fig, [str(v) for v in variants], axes[0].yaxis.get_ticklabels()[0].get_fontsize()
                          if len(variants) else 10.0)
    fig.subplots_adjust(wspace=0.12)
    return _png(fig, margins=(labels + 0.2, 0.15, 0.55, 0.75))


def guess_heatmaps(tables: dict[str, pd.DataFrame]) -> bytes:
    """The 2x2 guess table of each answerer as a heatmap of counts."""
    names = list(tables)
    fig = Figure(figsize=(3.2 * max(1, len(names)), 3.0))
    axes = fig.subplots(1, max(1, len(names)), squeeze=False)[0]
    labels = [["grounded", "lucky guess"], ["misread", "retrieval miss"]]
    for ax, name in zip(axes, names):
        t = tables[name].to_numpy(dtype=float)
        total = t.sum() or 1.0
        ax.imshow(t / total, cmap="Blues", vmin=0, vmax=1.6)  # light: the counts stay readable
        for i in range(2):
            for j in range(2):
                ax.text(j, i, f"{labels[i][j]}\n{int(t[i, j])} ({t[i, j] / total:.0%})", ha="center", va="center",
                        fontsize=8)
        ax.set_xticks([0, 1], ["sufficient", "insufficient"])
        ax.set_yticks([0, 1], ["correct", "wrong"])
        ax.set_title(name)
    fig.suptitle("Guess table (all variants)")
    return _png(fig)


def accuracy_by_srr(buckets: pd.DataFrame) -> bytes:
    """Accuracy (solid) and sufficiency (dashed) per SRR bucket, one line per answerer."""
    fig = Figure(figsize=(6.5, 3.8))
    ax = fig.subplots()
    order = sorted(set(buckets["srr_bucket"])) if len(buckets) else []
    x = np.arange(len(order))
    for i, (answerer, g) in enumerate(buckets.groupby("answerer", sort=False)):
        g = g.set_index("srr_bucket").reindex(order)
        color = PALETTE[i % len(PALETTE)]
        ax.plot(x, [_num(v) for v in g["accuracy"]], marker=MARKERS[i % len(MARKERS)], color=color,
                label=f"{answerer} accuracy")
        if i == 0:
            ax.plot(x, [_num(v) for v in g["sufficiency"]], linestyle="--", color="black", label="sufficiency")
    ax.set_xticks(x, order)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("SRR bucket")
    ax.set_ylabel("share of samples")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, **OUTSIDE)
    ax.set_title("Accuracy vs subgraph retrieval recall")
    return _png(fig)


def srr_vs_accuracy(summary: pd.DataFrame) -> bytes:
    """Per variant (one row each, named in full, ordered by mean SRR): its mean SRR (bar, left) beside
    each answerer's accuracy with its 95 % interval (right; colour and marker per answerer, rows of
    answerers set a little apart so no point hides another)."""
    answerers = list(dict.fromkeys(summary["answerer"]))
    srr = summary.groupby("variant", sort=False)["srr"].first()  # a context's SRR is every answerer's
    variants = sorted(srr.index, key=lambda v: (-_num(srr[v]) if not np.isnan(_num(srr[v])) else 1.0, v))
    y = np.arange(len(variants))
    fig = Figure(figsize=(10.0, 0.34 * len(variants) + 1.5))
    ax_srr, ax_acc = fig.subplots(1, 2, sharey=True, gridspec_kw={"width_ratios": [1, 2]})
    ax_srr.barh(y, [np.nan_to_num(_num(srr[v])) for v in variants], color="#999999")
    ax_srr.set_xlim(0, 1.03)
    ax_srr.set_xlabel("mean SRR")
    ax_srr.set_yticks(y, variants)
    ax_srr.invert_yaxis()
    ax_srr.grid(axis="x", alpha=0.3)
    step = 0.7 / max(1, len(answerers))
    for i, answerer in enumerate(answerers):
        g = summary[summary["answerer"] == answerer].set_index("variant").reindex(variants)
        acc = np.array([_num(v) for v in g["accuracy"]])
        err = np.array([[_num(a) - _num(lo), _num(hi) - _num(a)] for a, lo, hi in
                        zip(g["accuracy"], g["accuracy_low"], g["accuracy_high"])]).T.reshape(2, -1)
        ax_acc.errorbar(acc, y - 0.35 + step * (i + 0.5), xerr=np.nan_to_num(err), fmt=MARKERS[i % len(MARKERS)],
                        color=PALETTE[i % len(PALETTE)], markersize=4, capsize=2, linewidth=1, label=answerer)
    ax_acc.set_xlim(-0.02, 1.03)
    ax_acc.set_xlabel("accuracy (95 % interval)")
    ax_acc.grid(axis="x", alpha=0.3)
    ax_acc.legend(fontsize=8, title="answerer", **OUTSIDE)
    fig.suptitle("Variants: what reached the answerer (SRR) vs what it got right")
    FigureCanvasAgg(fig)
    labels = _text_inches(fig, variants, ax_srr.yaxis.get_ticklabels()[0].get_fontsize() if len(variants) else 10.0)
    fig.subplots_adjust(wspace=0.08)
    return _png(fig, margins=(labels + 0.2, 1.25, 0.55, 0.6))


#: rows counted at a time by :func:`_hex_points`
POINTS_CHUNK = 1 << 16


def _hex_points(cols: dict[str, Any]) -> dict[bool, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """For right answers (True) and wrong ones (False): each distinct (SRR, faithfulness) of the samples where
    both are measured, and how many samples have it (``xs``, ``ys``, ``counts``, sorted), counted
    :data:`POINTS_CHUNK` rows at a time: scores take few values, so thousands of samples are a few points.

    >>> xs, ys, n = _hex_points({"srr": [1.0, 0.5, 1.0, None], "faithfulness": [1.0, 0.0, 1.0, 1.0],
    ...                          "correct": [True, False, 1, True]})[True]
    >>> xs.tolist(), ys.tolist(), n.tolist()
    ([1.0], [1.0], [2.0])
    """
    counts: dict[bool, Counter[tuple[float, float]]] = {True: Counter(), False: Counter()}
    n = len(cols["srr"])
    for start in range(0, n, POINTS_CHUNK):
        part = range(start, min(n, start + POINTS_CHUNK))
        srr = as_array(picked(cols["srr"], part), float_or_nan, float)
        faith = as_array(picked(cols["faithfulness"], part), float_or_nan, float)
        right = as_array(picked(cols["correct"], part), lambda v: v is True or v == 1, bool)
        measured = ~np.isnan(srr) & ~np.isnan(faith)     # None and NaN alike, as notna() counts them
        for want in (True, False):
            g = measured & (right == want)
            found, k = np.unique(srr[g] + 1j * faith[g], return_counts=True)   # (SRR, faithfulness) as one number
            counts[want].update(dict(zip(zip(found.real.tolist(), found.imag.tolist()), k.tolist())))
    out = {}
    for want, c in counts.items():
        keys = sorted(c)
        out[want] = (np.array([x for x, _ in keys], dtype=float), np.array([y for _, y in keys], dtype=float),
                     np.array([c[k] for k in keys], dtype=float))
    return out


def faithfulness_vs_srr(df: pd.DataFrame) -> bytes:
    """Per sample (with measured faithfulness): SRR against faithfulness as hexagonal bins of counts
    (log colour scale), right answers and wrong ones in two panels; thousands of samples share few
    values, so a scatter would hide how many sit on each."""
    points = _hex_points(_columns(df, ["srr", "faithfulness", "correct"]))
    fig = Figure(figsize=(9.0, 4.0))
    *axes, cax = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1, 1, 0.05]})
    last = None
    for ax, (want, title) in zip(axes, ((True, "correct answers"), (False, "wrong answers"))):
        xs, ys, counts = points[want]
        n = int(counts.sum())
        if n:
            # each distinct point once, weighted by its samples: the same count in each hexagon as every sample
            last = ax.hexbin(xs, ys, C=counts, reduce_C_function=np.sum, gridsize=16, extent=(0, 1, 0, 1),
                             bins="log", cmap="cividis", mincnt=1)
            _inside(last)
        ax.axvline(0.7, color="#D55E00", linestyle=":", linewidth=1.2)
        ax.axhline(0.9, color="#D55E00", linestyle=":", linewidth=1.2)
        ax.set_xlim(-0.05, 1.05)
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel("SRR")
        ax.set_title(f"{title} ({n})", fontsize=10)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("faithfulness")
    axes[1].tick_params(labelleft=False)
    if last is not None:
        fig.colorbar(last, cax=cax, label="answers per hexagon (log scale)")
    else:
        cax.set_visible(False)
    fig.subplots_adjust(wspace=0.08)
    fig.suptitle("Faithfulness vs SRR (dotted: SRR 0.7, faithfulness 0.9)")
    return _png(fig, margins=(0.7, 0.75, 0.6, 0.7))
