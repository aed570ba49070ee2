"""The report section on counterfactual pairs: per variant and answerer, how often the answer stayed
the same although the diagram's answer flipped (:mod:`benchmark.metrics.pairs`).

A report adds it with ``pairs_section(records, load_pairs(split))`` (a :class:`Section` of the report
document) or takes the Markdown of :func:`pairs_markdown`.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from benchmark.metrics.pairs import pair_table
from benchmark.report.document import Section
from benchmark.report.markdown import render_markdown
from benchmark.report.tables import Table, fmt

TITLE = "Counterfactual pairs"


def pairs_section(records: Iterable[Any], pairs: Mapping[str, str]) -> Section:
    """The section: one paragraph on how to read it and one table (or a line saying there is no pair)."""
    rows = pair_table(records, pairs)
    sec = Section(TITLE)
    sec.blocks.append(
        "Each question of the generated split is asked on the original diagram and on a copy with one edge "
        "removed, reversed or relabelled so that the gold answer flips (`diagqa perturb`). **Same answer** is "
        "the share of pairs an answerer answered alike on both sides: it did not read the diagram there, "
        "whatever its accuracy. **Both right** is the share answered correctly on both sides. Pairs where "
        "either answer is unreadable or failed are unmeasured and counted apart.")
    if not rows:
        sec.blocks.append("No counterfactual pair was run by the same variant and answerer on both sides.")
        return sec
    sec.blocks.append(Table(
        "Pair consistency per variant and answerer",
        ["variant", "answerer", "pairs", "measured", "same answer", "both right"],
        [[r["variant"], r["answerer"], str(r["pairs"]), str(r["measured"]),
          fmt(r["same_answer_rate"]), fmt(r["both_correct_rate"])] for r in rows],
        align=["l", "l", "r", "r", "r", "r"]))
    return sec


def pairs_markdown(records: Iterable[Any], pairs: Mapping[str, str]) -> str:
    """:func:`pairs_section` as Markdown (a ``##`` heading, its paragraph and table)."""
    text = render_markdown([pairs_section(records, pairs)], TITLE)
    return text.split("\n", 2)[2]  # without the document title line
