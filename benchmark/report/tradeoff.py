"""The trade-off a user ships: grounded accuracy against the size of the context, per variant.

A pure function from the summary and the cost table to PNG bytes (drawn as the other plots are,
:func:`benchmark.report.plots._png`): one point per variant × answerer; candidates filled, controls
hollow, each labelled with its full variant name. An answerer that never had a sufficient context
(``blind``, which receives none) is left out: its grounded accuracy is 0 throughout.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from benchmark.report.plots import _num, _png

#: colour-blind-safe (Okabe-Ito)
COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]


def grounded_vs_tokens(summary: pd.DataFrame, costs: pd.DataFrame) -> bytes | None:
    """Mean context tokens (x) against grounded accuracy with its 95 % interval (y); ``None`` when no
    variant has a measured context size."""
    tokens = {r["variant"]: r["context_tokens"] for _, r in costs.iterrows() if r["context_tokens"] is not None}
    if not tokens or not len(summary):
        return None
    fig = Figure(figsize=(7.5, 4.8))
    ax = fig.subplots()
    answerers = [a for a in dict.fromkeys(summary["answerer"])
                 if any(v in tokens for v in summary[summary["answerer"] == a]["variant"])]
    owner = None  # the answerer whose points carry the variant labels
    for i, answerer in enumerate(answerers):
        g = summary[(summary["answerer"] == answerer) & summary["variant"].isin(list(tokens))]
        if not any(v for v in g["sufficiency"] if v is not None):
            continue  # no sufficient context ever reached it (blind receives none): grounded accuracy 0 throughout
        colour = COLOURS[i % len(COLOURS)]
        owner = answerer if owner is None else owner
        for control, face in ((False, colour), (True, "none")):
            part = g[g["control"].astype(bool) == control]
            if not len(part):
                continue
            xs = np.array([_num(tokens[v]) for v in part["variant"]])
            ys = np.array([_num(v) for v in part["grounded_accuracy"]])
            err = np.array([[_num(y) - _num(lo), _num(hi) - _num(y)] for y, lo, hi in
                            zip(part["grounded_accuracy"], part["grounded_accuracy_low"], part["grounded_accuracy_high"])]).T
            ax.errorbar(xs, ys, yerr=np.nan_to_num(err), fmt="o", mfc=face, mec=colour, ecolor=colour, alpha=0.85,
                        capsize=2, label=f"{answerer} ({'control' if control else 'candidate'})")
            for x, y, v in zip(xs, ys, part["variant"]):
                # one label per variant (its context size is every answerer's): on the first answerer's point
                if answerer == owner and not (np.isnan(x) or np.isnan(y)):
                    ax.annotate(str(v), (x, y), fontsize=6, xytext=(3, 3), textcoords="offset points", alpha=0.8)
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlim(-0.03 * max(tokens.values()), 1.25 * max(tokens.values()) + 1)  # room for the labels
    ax.set_xlabel("context size (mean tokens)")
    ax.set_ylabel("grounded accuracy")
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:  # a run whose every point is unmeasured has nothing to name
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    ax.set_title("Grounded accuracy against context size")
    return _png(fig)
