"""Long-context faithfulness: accuracy, grounded accuracy and faithfulness against the position of
the evidence and the length of the context, per answerer ("lost in the middle").

Reads the samples of a run whose variants use the ``long<n>k-<position>-<base>`` selector
(:mod:`retrievers.longctx`, e.g. ``configs/long-context.yaml``); samples of the plain ``base``
selector of the same finder and source are the unpadded reference (length "base").

Per answerer × length × position:

* **accuracy**: share of right answers among samples whose correctness is measured;
* **grounded accuracy**: share of ``guess_class == "grounded"`` among the same samples;
* **faithfulness**: mean faithfulness over samples that state claims;
* **tokens**: median context length, estimated as characters / 4 from the stored context text
  (a context is shorter than asked when the distractor pool runs out).

The **middle gap** of a length is accuracy(middle) − mean(accuracy(start), accuracy(end)): negative
when the answerer loses evidence in the middle.
"""
from __future__ import annotations

import re
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable, Sequence

from retrievers.longctx import POSITIONS, estimate_tokens

_NAME = re.compile(r"long(?P<k>\d+)k-(?P<position>start|middle|end)-(?P<base>.+)\Z")
BASE = "base"


def parse_selector(name: str) -> tuple[int, str, str] | None:
    """(kilotokens, position, base) of a long-context selector name, else None.

    >>> parse_selector("long4k-middle-oracle"), parse_selector("khop2")
    ((4, 'middle', 'oracle'), None)
    """
    m = _NAME.match(name or "")
    return (int(m["k"]), m["position"], m["base"]) if m else None


def _mean(xs: Iterable[float]) -> float | None:
    xs = list(xs)
    return sum(xs) / len(xs) if xs else None


def cell_stats(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The numbers of one cell (see the module docstring).

    >>> recs = [{"metrics": {"correct": True, "guess_class": "grounded", "faithfulness": 1.0}, "context": {"text": "x" * 40}},
    ...         {"metrics": {"correct": False, "guess_class": "misread", "faithfulness": 0.5}, "context": {"text": "x" * 80}},
    ...         {"metrics": {"correct": None, "guess_class": "error", "faithfulness": None}, "context": {"text": ""}}]
    >>> s = cell_stats(recs)
    >>> s["n"], s["measured"], s["accuracy"], s["grounded_accuracy"], s["faithfulness"], s["tokens"]
    (3, 2, 0.5, 0.5, 0.75, 10)
    """
    ms = [r.get("metrics") or {} for r in records]
    measured = [m for m in ms if m.get("correct") is not None]
    faith = [m["faithfulness"] for m in ms if m.get("faithfulness") is not None]
    return {"n": len(records), "measured": len(measured),
            "accuracy": _mean(1.0 if m["correct"] else 0.0 for m in measured),
            "grounded_accuracy": _mean(1.0 if m.get("guess_class") == "grounded" else 0.0 for m in measured),
            "faithfulness": _mean(faith),
            "tokens": int(statistics.median(estimate_tokens((r.get("context") or {}).get("text") or "") for r in records))
            if records else 0}


def long_context_table(records: Iterable[dict[str, Any]]) -> dict[tuple[str, str], dict[Any, dict[str, Any]]]:
    """``{(answerer, base): {(kilotokens, position) or "base": cell stats}}`` of a run's samples."""
    cells: dict[tuple[str, str], dict[Any, list]] = defaultdict(lambda: defaultdict(list))
    plain: dict[tuple[str, str, str, str], list] = defaultdict(list)
    bases: set[tuple[str, str, str]] = set()
    for r in records:
        if r.get("metrics") is None and r.get("answer") is None:
            continue
        parsed = parse_selector(str(r.get("selector") or ""))
        if parsed:
            k, pos, base = parsed
            cells[(str(r.get("answerer")), base)][(k, pos)].append(r)
            bases.add((str(r.get("finder")), str(r.get("source")), base))
        else:
            plain[(str(r.get("answerer")), str(r.get("finder")), str(r.get("source")), str(r.get("selector")))].append(r)
    for (answerer, finder, source, selector), recs in plain.items():
        if (finder, source, selector) in bases:
            cells[(answerer, selector)][BASE].extend(recs)
    return {key: {c: cell_stats(v) for c, v in cell.items()} for key, cell in sorted(cells.items())}


def _f(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f} %"


def middle_gap(cells: dict[Any, dict[str, Any]], k: int) -> float | None:
    """accuracy(middle) − mean(accuracy(start), accuracy(end)) at length ``k``; None when a cell is missing.

    >>> middle_gap({(1, "start"): {"accuracy": 0.9}, (1, "middle"): {"accuracy": 0.6}, (1, "end"): {"accuracy": 0.8}}, 1)
    -0.25
    """
    acc = [cells.get((k, p), {}).get("accuracy") for p in POSITIONS]
    if any(a is None for a in acc):
        return None
    return round(acc[1] - (acc[0] + acc[2]) / 2, 10)


def long_context_section(records: Iterable[dict[str, Any]], plot: str | None = None) -> str:
    """The markdown section: per answerer and base, one row per length × position (and the base)."""
    table = long_context_table(records)
    lines = ["## Long-context faithfulness", ""]
    if not table:
        return "\n".join(lines + ["No sample of this run uses a `long<n>k-<position>-<base>` selector.", ""])
    lines.append("The evidence (what the base selector chose) sits at the start, middle or end of distractor edges "
                 "from other diagrams and from far regions of the same diagram; tokens are characters / 4. "
                 "The solver is the control: its rows must not move.")
    if plot:
        lines += ["", f"![accuracy against length and position]({plot})"]
    for (answerer, base), cells in table.items():
        lines += ["", f"### {answerer} — base selector `{base}`", "",
                  "| length | position | n | tokens | accuracy | grounded accuracy | faithfulness |",
                  "|---|---|---:|---:|---:|---:|---:|"]
        order = ([BASE] if BASE in cells else []) + sorted((c for c in cells if c != BASE),
                                                           key=lambda c: (c[0], POSITIONS.index(c[1])))
        for c in order:
            s = cells[c]
            length, pos = ("base", "—") if c == BASE else (f"{c[0]}k", c[1])
            lines.append(f"| {length} | {pos} | {s['n']} | {s['tokens']} | {_f(s['accuracy'])} "
                         f"| {_f(s['grounded_accuracy'])} | {_f(s['faithfulness'])} |")
        gaps = [(k, middle_gap(cells, k)) for k in sorted({c[0] for c in cells if c != BASE})]
        gaps = [(k, g) for k, g in gaps if g is not None]
        if gaps:
            lines += ["", "Middle gap (accuracy middle − mean of start and end): "
                      + ", ".join(f"{k}k {100 * g:+.1f} pts" for k, g in gaps)]
    return "\n".join(lines) + "\n"


def plot_long_context(records: Iterable[dict[str, Any]], path: Path) -> Path | None:
    """Accuracy against length, one line per position, one panel per answerer × base; None when nothing to plot."""
    table = long_context_table(records)
    if not table:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(table), figsize=(3.6 * len(table), 3.2), squeeze=False, sharey=True)
    for ax, ((answerer, base), cells) in zip(axes[0], table.items()):
        ks = sorted({c[0] for c in cells if c != BASE})
        for pos in POSITIONS:
            ys = [cells.get((k, pos), {}).get("accuracy") for k in ks]
            ax.plot([f"{k}k" for k in ks], [float("nan") if y is None else y for y in ys], marker="o", label=pos)
        if BASE in cells and cells[BASE]["accuracy"] is not None:
            ax.axhline(cells[BASE]["accuracy"], color="grey", linestyle=":", label="base")
        ax.set_title(f"{answerer} / {base}", fontsize=9)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("context length")
    axes[0][0].set_ylabel("accuracy")
    axes[0][-1].legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
