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
  (in the default report: its ``context_tokens``, words and punctuation marks);
* **errors** / **too long**: samples the answerer failed on / of them, prompts over the model's
  context window (``context_too_long``), never counted as wrong answers.

The plot (:func:`long_context_png`) draws accuracy, grounded accuracy and faithfulness against
length, one line per position, one column per answerer × base; the default report carries it and
the tables whenever a run has long-context variants.

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

#: the error kind of a prompt over a model's context window (``benchmark.answerers.llm.CONTEXT_TOO_LONG``)
CONTEXT_TOO_LONG = "context_too_long"

_NAME = re.compile(r"long(?P<k>\d+)k-(?P<position>start|middle|end)-(?P<base>.+)\Z")
#: a long-context variant's selector, as far as telling it from others needs
_LONG = re.compile(r"long\d+k-")
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
    """The numbers of one cell (see the module docstring). ``errors`` counts the samples the answerer
    failed on (unmeasured, left out of the rates), ``too_long`` those of them whose prompt exceeded the
    model's context window (``context_too_long``): a long context a model cannot take is an error,
    never a wrong answer. A record's ``context_tokens``, when given, is its length; else characters / 4
    of its context text.

    >>> recs = [{"metrics": {"correct": True, "guess_class": "grounded", "faithfulness": 1.0}, "context": {"text": "x" * 40}},
    ...         {"metrics": {"correct": False, "guess_class": "misread", "faithfulness": 0.5}, "context": {"text": "x" * 80}},
    ...         {"metrics": {"correct": None, "guess_class": "error", "faithfulness": None, "error": "context_too_long"},
    ...          "context": {"text": ""}}]
    >>> s = cell_stats(recs)
    >>> s["n"], s["measured"], s["accuracy"], s["grounded_accuracy"], s["faithfulness"], s["tokens"], s["errors"], s["too_long"]
    (3, 2, 0.5, 0.5, 0.75, 10, 1, 1)
    """
    ms = [r.get("metrics") or {} for r in records]
    measured = [m for m in ms if m.get("correct") is not None]
    faith = [m["faithfulness"] for m in ms if m.get("faithfulness") is not None]
    errors = [m for m in ms if m.get("error")]

    def tokens(r: dict[str, Any]) -> int:
        if r.get("context_tokens") is not None:
            return int(r["context_tokens"])
        return estimate_tokens((r.get("context") or {}).get("text") or "")

    return {"n": len(records), "measured": len(measured),
            "accuracy": _mean(1.0 if m["correct"] else 0.0 for m in measured),
            "grounded_accuracy": _mean(1.0 if m.get("guess_class") == "grounded" else 0.0 for m in measured),
            "faithfulness": _mean(faith),
            "errors": len(errors), "too_long": sum(1 for m in errors if m["error"] == CONTEXT_TOO_LONG),
            "tokens": int(statistics.median(tokens(r) for r in records)) if records else 0}


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


def frame_records(samples: Any) -> list[dict[str, Any]]:
    """The report's samples frame (:func:`benchmark.report.aggregate.frame`) as the records
    :func:`long_context_table` reads, lengths from its ``context_tokens`` (words and punctuation
    marks, the report's count); samples with a stage error are left out, as unanswered."""
    from benchmark.report.aggregate import matching

    if not len(samples) or not matching(samples, "selector", lambda s: _LONG.match(str(s))).any():
        return []
    cols = ["answerer", "selector", "finder", "source", "correct", "guess_class", "faithfulness", "error",
            "context_tokens", "error_stage"]
    out = []
    for row in samples[cols].itertuples(index=False):
        r = dict(zip(cols, (None if v != v else v for v in row)))   # v != v: NaN
        if r["error_stage"] is not None:
            continue
        out.append({"answerer": r["answerer"], "selector": r["selector"], "finder": r["finder"], "source": r["source"],
                    "answer": {}, "context_tokens": r["context_tokens"],
                    "metrics": {k: r[k] for k in ("correct", "guess_class", "faithfulness", "error")}})
    return out


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


INTRO = ("The evidence (what the base selector chose) sits at the start, middle or end of distractor edges "
         "from other diagrams and from far regions of the same diagram (beyond the dataset's real edges, edges "
         "recombining nodes of two other diagrams); accuracy and grounded accuracy are over the samples whose "
         "correctness is measured, faithfulness over answers with claims. *errors* are samples the answerer "
         "failed on, left out of the rates; *too long* those of them whose prompt exceeded the model's context "
         "window. The solver is the control: its rows must not move.")


def _order(cells: dict[Any, dict[str, Any]]) -> list[Any]:
    return ([BASE] if BASE in cells else []) + sorted((c for c in cells if c != BASE),
                                                      key=lambda c: (c[0], POSITIONS.index(c[1])))


def long_context_blocks(table: dict[tuple[str, str], dict[Any, dict[str, Any]]],
                        tokens: str = "tokens (chars / 4)") -> list[Any]:
    """The section as blocks (paragraphs and tables) for the report; ``tokens`` names the length column."""
    from benchmark.report.tables import Table

    if not table:
        return ["No sample of this run uses a `long<n>k-<position>-<base>` selector."]
    blocks: list[Any] = [INTRO]
    for (answerer, base), cells in table.items():
        rows = []
        for c in _order(cells):
            s = cells[c]
            length, pos = ("base", "—") if c == BASE else (f"{c[0]}k", c[1])
            rows.append([length, pos, str(s["n"]), str(s["tokens"]), _f(s["accuracy"]), _f(s["grounded_accuracy"]),
                         _f(s["faithfulness"]), str(s["errors"]), str(s["too_long"])])
        gaps = [(k, middle_gap(cells, k)) for k in sorted({c[0] for c in cells if c != BASE})]
        gaps = [(k, g) for k, g in gaps if g is not None]
        note = ("Middle gap (accuracy middle − mean of start and end): "
                + ", ".join(f"{k}k {100 * g:+.1f} pts" for k, g in gaps)) if gaps else ""
        blocks.append(Table(f"{answerer} — base selector {base}",
                            ["length", "position", "n", tokens, "accuracy", "grounded accuracy", "faithfulness",
                             "errors", "too long"], rows, note=note, align=["l", "l"] + ["r"] * 7))
    return blocks


def long_context_section(records: Iterable[dict[str, Any]], plot: str | None = None) -> str:
    """The markdown section: per answerer and base, one row per length × position (and the base)."""
    from benchmark.report.tables import Table, to_markdown

    table = long_context_table(records)
    lines = ["## Long-context faithfulness", ""]
    for b in long_context_blocks(table):
        if isinstance(b, Table):
            lines += [f"### {b.caption}", "", to_markdown(b)] + (["", b.note] if b.note else [])
        else:
            lines.append(b)
            if plot:
                lines += ["", f"![accuracy, grounded accuracy and faithfulness against length and position]({plot})"]
                plot = None
        lines.append("")
    return "\n".join(lines)


#: the three rates plotted, one row of panels each
PLOTTED = (("accuracy", "accuracy"), ("grounded_accuracy", "grounded accuracy"), ("faithfulness", "faithfulness"))


#: line style, marker and its size per position: start, middle, end (big to small, so that equal
#: values show every marker)
_STYLES = (("-", "o", 9), ("--", "s", 6), (":", "^", 4))


def long_context_png(table: dict[tuple[str, str], dict[Any, dict[str, Any]]]) -> bytes | None:
    """Accuracy, grounded accuracy and faithfulness (rows) against length, one line per position, one
    column per answerer × base, the unpadded base dotted; PNG bytes, None when nothing to plot."""
    if not table:
        return None
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(PLOTTED), len(table), figsize=(3.4 * len(table) + 0.6, 2.6 * len(PLOTTED)),
                             squeeze=False, sharey=True)
    for j, ((answerer, base), cells) in enumerate(table.items()):
        ks = sorted({c[0] for c in cells if c != BASE})
        for i, (key, name) in enumerate(PLOTTED):
            ax = axes[i][j]
            for pos, (style, marker, size) in zip(POSITIONS, _STYLES):   # equal lines stay visible
                ys = [cells.get((k, pos), {}).get(key) for k in ks]
                ax.plot([f"{k}k" for k in ks], [float("nan") if y is None else y for y in ys], linestyle=style,
                        marker=marker, markersize=size, label=pos)
            if BASE in cells and cells[BASE][key] is not None:
                ax.axhline(cells[BASE][key], color="grey", linestyle=":", label="base")
            ax.set_ylim(0, 1.02)
            if i == 0:
                ax.set_title(f"{answerer} / {base}", fontsize=9)
            if j == 0:
                ax.set_ylabel(name)
            if i == len(PLOTTED) - 1:
                ax.set_xlabel("context length")
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()


def plot_long_context(records: Iterable[dict[str, Any]], path: Path) -> Path | None:
    """:func:`long_context_png` of a run's records written to ``path``; None when nothing to plot."""
    png = long_context_png(long_context_table(records))
    if png is None:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png)
    return path
