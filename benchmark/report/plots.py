"""The report's plots, each a pure function from aggregated tables to PNG bytes.

Figures are drawn with matplotlib's object API on the Agg canvas (no pyplot state, no display)
and saved without a timestamp, so the same tables give the same bytes.
"""
from __future__ import annotations

import io
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties

COLORS = {"grounded": "#2e7d32", "lucky_guess": "#ef6c00", "misread": "#6a1b9a", "retrieval_miss": "#9e9e9e"}
#: a legend beside the axes, where it hides no point (and "best" need not search among thousands of them)
OUTSIDE = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "borderaxespad": 0.0}
PALETTE = ["#1565c0", "#ef6c00", "#2e7d32", "#c62828", "#6a1b9a", "#00838f", "#5d4037", "#ad1457"]


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
            ax.axvline(floor, color="black", linestyle="--", linewidth=1, label="blind floor")
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
        ax.imshow(t / total, cmap="Oranges", vmin=0, vmax=1)
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
        ax.plot(x, [_num(v) for v in g["accuracy"]], marker="o", color=color, label=f"{answerer} accuracy")
        if i == 0:
            ax.plot(x, [_num(v) for v in g["sufficiency"]], linestyle="--", color="black", label="sufficiency")
    ax.set_xticks(x, order)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("SRR bucket")
    ax.set_ylabel("share of samples")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("Accuracy vs subgraph retrieval recall")
    return _png(fig)


def srr_vs_accuracy(summary: pd.DataFrame) -> bytes:
    """Each variant x answerer as a point: mean SRR (x) against accuracy (y), with 95 % intervals."""
    fig = Figure(figsize=(6.5, 4.5))
    ax = fig.subplots()
    for i, (answerer, g) in enumerate(summary.groupby("answerer", sort=False)):
        color = PALETTE[i % len(PALETTE)]
        xs, ys = np.array([_num(v) for v in g["srr"]]), np.array([_num(v) for v in g["accuracy"]])
        yerr = np.array([[_num(a) - _num(lo), _num(hi) - _num(a)] for a, lo, hi in
                         zip(g["accuracy"], g["accuracy_low"], g["accuracy_high"])]).T
        ax.errorbar(xs, ys, yerr=np.nan_to_num(yerr), fmt="o", color=color, label=answerer, capsize=2)
        for x, y, v in zip(xs, ys, g["variant"]):
            if i == 0 and not (np.isnan(x) or np.isnan(y)):  # one label per variant: its SRR is every answerer's
                ax.annotate(str(v).split("+")[-1], (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("mean SRR")
    ax.set_ylabel("accuracy")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")  # low SRR with high accuracy: the corner a reader hopes to find empty
    ax.set_title("Variants: what reached the answerer vs what it got right")
    return _png(fig)


def faithfulness_vs_srr(df: pd.DataFrame) -> bytes:
    """Per sample (with measured faithfulness): SRR against faithfulness, right answers and wrong apart."""
    fig = Figure(figsize=(6.5, 4.0))
    ax = fig.subplots()
    s = df[df["faithfulness"].notna() & df["srr"].notna()]
    rng = np.random.default_rng(0)
    for correct, color, label in ((False, "#c62828", "wrong"), (True, COLORS["grounded"], "correct")):
        g = s[s["correct"].astype(bool) == correct] if len(s) else s
        if not len(g):
            continue
        x = g["srr"].astype(float).to_numpy() + rng.uniform(-0.015, 0.015, len(g))
        y = g["faithfulness"].astype(float).to_numpy() + rng.uniform(-0.015, 0.015, len(g))
        _inside(ax.scatter(x, y, s=8, alpha=0.35, color=color, label=label))
    ax.axvline(0.7, color="black", linestyle=":", linewidth=1)
    ax.axhline(0.9, color="black", linestyle=":", linewidth=1)
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("SRR")
    ax.set_ylabel("faithfulness")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, **OUTSIDE)
    ax.set_title("Faithfulness vs SRR (dotted: SRR 0.7, faithfulness 0.9)")
    return _png(fig)
