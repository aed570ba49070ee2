"""The report section on decisions: mix per answerer, the layer's errors, its precision and recall,
and where signals disagree.

* **decision mix**: share of ACCEPT / REVIEW / REJECT among an answerer's samples.
* **wrong ACCEPTed**: samples ACCEPTed whose answer is wrong (``correct`` False);
  **right REJECTed**: samples REJECTed whose answer is right.
* **precision / recall against correctness**: ACCEPT read as "this answer is right";
  precision = right among ACCEPTed, recall = ACCEPTed among right. Samples whose correctness is
  unmeasured (answerer errors) are left out. The same **against groundedness** with
  ``guess_class == "grounded"`` as the truth.
* **signal disagreements**: high SRR (= 1) but unfaithful (faithfulness < 1); sufficient context
  but a wrong answer; right on an insufficient context (lucky guess); graph and text verdicts differing.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Sequence

from benchmark.decision.rules import ACCEPT, REJECT, REVIEW


def precision_recall(tp: int, fp: int, fn: int) -> tuple[float | None, float | None]:
    """Precision and recall from counts of true positives, false positives and false negatives; None
    when undefined.

    >>> precision_recall(1, 1, 1)
    (0.5, 0.5)
    >>> precision_recall(0, 0, 1)
    (None, 0.0)
    """
    return (tp / (tp + fp) if tp + fp else None), (tp / (tp + fn) if tp + fn else None)


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f} %"


def answerer_stats(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The numbers of one answerer's decision rows (see the module docstring).

    >>> rows = [{"verdict": "ACCEPT", "correct": True, "guess_class": "grounded"},
    ...         {"verdict": "ACCEPT", "correct": False, "guess_class": "misread"},
    ...         {"verdict": "REJECT", "correct": True, "guess_class": "lucky_guess"},
    ...         {"verdict": "REVIEW", "correct": None, "guess_class": "error"}]
    >>> s = answerer_stats(rows)
    >>> s["mix"][ACCEPT], s["wrong_accepted"], s["right_rejected"], s["precision_correct"], s["recall_correct"]
    (0.5, 1, 1, 0.5, 0.5)
    >>> s["precision_grounded"], s["recall_grounded"]
    (0.5, 1.0)
    """
    tally = _AnswererTally()
    for r in rows:
        tally.add(r)
    return tally.stats()


#: the kinds of disagreement counted, in the report's order
DISAGREEMENTS = ("high SRR but unfaithful", "sufficient context but wrong", "right on an insufficient context",
                 "graph and text verdicts differ")


def disagreements(rows: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Counts of samples whose signals point different ways.

    >>> disagreements([{"graph": {"srr": 1.0, "faithfulness": 0.5, "sufficient": True}, "correct": False,
    ...                 "verdict": "REJECT", "rule": "G3", "text_verdict": "ACCEPT"}])
    {'high SRR but unfaithful': 1, 'sufficient context but wrong': 1, 'right on an insufficient context': 0, 'graph and text verdicts differ': 1}
    >>> disagreements([{"graph": {}, "verdict": "REVIEW", "rule": "G5", "text_verdict": None}])["graph and text verdicts differ"] is None
    True
    """
    tally = _AnswererTally()
    for r in rows:
        tally.add(r)
    return tally.disagreements()


class _AnswererTally:
    """The section's numbers for one answerer, gathered one decision row at a time."""

    def __init__(self) -> None:
        self.n = self.measured = self.wrong_accepted = self.right_rejected = 0
        self.verdicts: Counter[str] = Counter()
        self.rules: Counter[str] = Counter()
        #: (ACCEPTed, truth) counts against correctness and against groundedness: tp, fp, fn
        self.vs_correct = [0, 0, 0]
        self.vs_grounded = [0, 0, 0]
        self.dis: dict[str, int] = dict.fromkeys(DISAGREEMENTS, 0)
        self.compared = 0

    def add(self, r: dict[str, Any]) -> None:
        verdict = r["verdict"]
        self.n += 1
        self.verdicts[verdict] += 1
        self.rules[r.get("rule")] += 1
        correct = r.get("correct")
        if correct is not None:
            self.measured += 1
            accepted = verdict == ACCEPT
            for counts, truth in ((self.vs_correct, bool(correct)), (self.vs_grounded, r.get("guess_class") == "grounded")):
                counts[0] += accepted and truth
                counts[1] += accepted and not truth
                counts[2] += (not accepted) and truth
            self.wrong_accepted += accepted and correct is False
            self.right_rejected += verdict == REJECT and correct is True
        g = r.get("graph") or {}
        if g.get("srr") is not None and g["srr"] >= 1.0 and g.get("faithfulness") is not None and g["faithfulness"] < 1.0:
            self.dis["high SRR but unfaithful"] += 1
        if g.get("sufficient") is True and correct is False:
            self.dis["sufficient context but wrong"] += 1
        if g.get("sufficient") is False and correct is True:
            self.dis["right on an insufficient context"] += 1
        if r.get("text_verdict") and str(r.get("rule", "G")).startswith("G"):
            self.compared += 1
            self.dis["graph and text verdicts differ"] += r["text_verdict"] != verdict

    def stats(self) -> dict[str, Any]:
        n = self.n
        pc, rc = precision_recall(*self.vs_correct)
        pg, rg = precision_recall(*self.vs_grounded)
        return {
            "n": n, "measured": self.measured,
            "mix": {v: (self.verdicts[v] / n if n else 0.0) for v in (ACCEPT, REVIEW, REJECT)},
            "counts": {v: self.verdicts[v] for v in (ACCEPT, REVIEW, REJECT)},
            "wrong_accepted": self.wrong_accepted, "right_rejected": self.right_rejected,
            "precision_correct": pc, "recall_correct": rc, "precision_grounded": pg, "recall_grounded": rg,
        }

    def disagreements(self) -> dict[str, int | None]:
        out: dict[str, int | None] = dict(self.dis)
        if not self.compared:   # no graph-decided sample has text signals (they are computed only where needed)
            out["graph and text verdicts differ"] = None
        return out


class DecisionTally:
    """The section's numbers gathered one decision row at a time, per answerer: a run's decisions can
    be written out as they are made and the section built without holding them.

    >>> t = DecisionTally(); t.add({"answerer": "solver", "verdict": "ACCEPT", "rule": "G6", "correct": True})
    >>> t.n, t.blocks()[1].rows[0][:3]
    (1, ['solver', '1', '100.0 %'])
    """

    def __init__(self) -> None:
        self.n = 0
        self.by: dict[str, _AnswererTally] = defaultdict(_AnswererTally)

    def add(self, r: dict[str, Any]) -> None:
        self.n += 1
        self.by[str(r.get("answerer"))].add(r)

    def blocks(self, seconds: float | None = None) -> list[Any]:
        """The section as blocks (see :func:`decision_blocks`)."""
        from benchmark.report.tables import Table

        by = self.by
        intro = INTRO
        if seconds is not None and self.n:
            intro += f" {self.n} samples decided in {seconds:.2f} s ({1000 * seconds / self.n:.2f} ms per sample)."
        blocks: list[Any] = [intro]
        mix = []
        for a in sorted(by):
            s = by[a].stats()
            mix.append([a, str(s["n"]), _pct(s["mix"][ACCEPT]), _pct(s["mix"][REVIEW]), _pct(s["mix"][REJECT]),
                        str(s["wrong_accepted"]), str(s["right_rejected"]), _pct(s["precision_correct"]),
                        _pct(s["recall_correct"]), _pct(s["precision_grounded"]), _pct(s["recall_grounded"])])
        blocks.append(Table("Decision mix and the layer's errors, per answerer",
                            ["answerer", "n", "ACCEPT", "REVIEW", "REJECT", "wrong ACCEPTed", "right REJECTed",
                             "precision (correct)", "recall (correct)", "precision (grounded)", "recall (grounded)"],
                            mix, align=["l"] + ["r"] * 10))
        seen = {k for t in by.values() for k in t.rules}
        names = [k for k in RULE_ORDER if k in seen]
        blocks.append(Table("Rules that fired (samples)", ["answerer", *names],
                            [[a, *(str(by[a].rules[k]) for k in names)] for a in sorted(by)],
                            align=["l"] + ["r"] * len(names)))
        dis = {a: by[a].disagreements() for a in sorted(by)}
        dnames = list(DISAGREEMENTS)
        blocks.append(Table("Signal disagreements (samples)", ["answerer", *dnames],
                            [[a, *("–" if d[k] is None else str(d[k]) for k in dnames)] for a, d in dis.items()],
                            align=["l"] + ["r"] * len(dnames),
                            note="High SRR: SRR = 1; unfaithful: faithfulness < 1. Graph and text verdicts are "
                                 "compared where a graph rule decided and the text signals were computed too "
                                 "(`diagqa decide --all-signals`); – where they were not."))
        return blocks


INTRO = ("Each sample gets ACCEPT, REVIEW or REJECT from the decision layer (graph rules G1–G6 first, then "
         "text rules T1–T9; thresholds in `configs/decision.yaml`). ACCEPT is read as \"this answer is right\": "
         "*wrong ACCEPTed* are its false accepts, *right REJECTed* its false rejects; precision = right among "
         "ACCEPTed, recall = ACCEPTed among right, over the samples whose correctness is measured, and the same "
         "with grounded answers as the truth.")


def decision_blocks(rows: Sequence[dict[str, Any]], *, seconds: float | None = None) -> list[Any]:
    """The section as blocks (paragraphs and :class:`~benchmark.report.tables.Table`), one table per topic
    and one row per answerer; both the report and ``decisions.md`` render these.

    >>> rows = [{"answerer": "solver", "verdict": "ACCEPT", "rule": "G6", "correct": True, "guess_class": "grounded",
    ...          "graph": {"srr": 1.0, "faithfulness": 1.0, "sufficient": True}, "text_verdict": "REVIEW"}]
    >>> blocks = decision_blocks(rows)
    >>> blocks[1].headers[:5], blocks[1].rows[0][:5]
    (['answerer', 'n', 'ACCEPT', 'REVIEW', 'REJECT'], ['solver', '1', '100.0 %', '0.0 %', '0.0 %'])
    >>> blocks[3].rows[0]
    ['solver', '0', '0', '0', '1']
    >>> decision_blocks([dict(rows[0], text_verdict=None)])[3].rows[0][-1]
    '–'

    """
    tally = DecisionTally()
    for r in rows:
        tally.add(r)
    return tally.blocks(seconds)


def decision_section(rows: Sequence[dict[str, Any]], *, seconds: float | None = None) -> str:
    """The markdown section (``decisions.md``): :func:`decision_blocks` rendered."""
    from benchmark.report.tables import Table, to_markdown

    lines = ["## Decisions per answer", ""]
    for b in decision_blocks(rows, seconds=seconds):
        if isinstance(b, Table):
            lines += [f"{b.caption}:", "", to_markdown(b)]
        else:
            lines.append(str(b))
        lines.append("")
    return "\n".join(lines)


#: the rules in the section's column order
RULE_ORDER = ("G1", "G2", "G3", "G4", "G5", "G6", "T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8", "T9", "accept")
