"""The report's section on the LLM judge, the citation check and the self-check, from a run's ``judge.json``.

:func:`judge_sections` gives nothing when the run has no ``judge.json`` (``diagqa judge`` never ran on
it), so the default report is unchanged for a run without a judge.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmark.judge.prompt import LABELS
from benchmark.metrics.faithfulness import VERDICTS


def _kappa(b: dict[str, Any]) -> str:
    from benchmark.report.tables import fmt

    if b.get("kappa") is None:
        return "– (undefined)" if b.get("claims") else "–"
    interval = f" [{fmt(b['kappa_low'])}, {fmt(b['kappa_high'])}]" if b.get("kappa_low") is not None else ""
    return fmt(b["kappa"]) + interval


def _counts(d: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in d.items()) or "–"


def judge_sections(summary: dict[str, Any] | None) -> list[Any]:
    """Report sections (:class:`benchmark.report.document.Section`) from a ``judge.json`` summary."""
    from benchmark.report.document import Section
    from benchmark.report.tables import Table, fmt

    if not summary:
        return []
    out = []
    sec = Section("Citation check, LLM judge and self-check")
    cit = summary.get("citations") or {}
    if cit:
        sec.blocks.append("**Citation check.** Every edge an answer cites must be in the context it was given. A "
                          "cited edge outside the context is an *unfaithful citation*; one the diagram does not have "
                          "at all is a *fabricated citation* (a subset of the former). An answer fails the check when "
                          "any cited edge is outside its context (the decision layer's rules G2 and G3).")
        sec.blocks.append(Table("Citations per answerer", ["answerer", "answers", "citing", "cited edges",
                                                           "in the context", "outside the context",
                                                           "not in the diagram", "answers failing"],
                                [[a, fmt(c["answers"]), fmt(c["citing"]), fmt(c["cited"]), fmt(c["in_context"]),
                                  fmt(c["outside_context"]), fmt(c["not_in_diagram"]), fmt(c["failing"])]
                                 for a, c in cit.items()], align=["l"] + ["r"] * 7))
    j = summary.get("judge")
    if j:
        a = j.get("all") or {}
        sec.blocks.append(
            f"**LLM judge** (`{j.get('model')}`). The judge labelled each claim of an answer supported, contradicted or "
            "not in context, reading the context as the answerer received it; the claims it was given are the ones the "
            "structural faithfulness check found, so both label the same claims. Cohen's kappa is on \"the context "
            "supports this claim\" (judge *supported* against structural *supported*), with a 95 % bootstrap interval "
            f"over claims (seed {j.get('seed', 0)}). Over all answerers: {fmt(a.get('claims'))} claims compared, observed "
            f"agreement {fmt(a.get('observed'))}, **kappa {_kappa(a)}**. A judge is worth consulting where its kappa "
            "is high (above about 0.8 it agrees almost as a second structural check would); below about 0.6, its "
            "labels on free text should not be trusted either. Failed judgements are errors, never scores.")
        rows = []
        for name, b in (j.get("answerers") or {}).items():
            rows.append([name, fmt(b["samples"]), fmt(b["judged"]), _counts(b.get("errors") or {}),
                         fmt(sum((b.get("not_judged") or {}).values())), fmt(b["claims"]), fmt(b.get("observed")),
                         _kappa(b), _counts(b.get("added") or {})])
        sec.blocks.append(Table("Judge agreement with the structural check, per answerer",
                                ["answerer", "samples", "judged", "judge errors", "not judged", "claims compared",
                                 "observed agreement", "kappa [95 % CI]", "claims the judge added"], rows,
                                align=["l"] + ["r"] * 8))
        conf = a.get("confusion") or {}
        if conf:
            sec.blocks.append(Table("Confusion over all answerers (claims): judge label × structural verdict",
                                    ["judge \\ structural", *VERDICTS],
                                    [[lab, *(fmt((conf.get(lab) or {}).get(v, 0)) for v in VERDICTS)] for lab in LABELS],
                                    align=["l", "r", "r", "r"]))
        reasons: dict[str, int] = {}
        for b in (j.get("answerers") or {}).values():
            for k, v in (b.get("not_judged") or {}).items():
                reasons[k] = reasons.get(k, 0) + v
        if reasons:
            sec.blocks.append("Not judged: " + "; ".join(f"{v} — {k}" for k, v in sorted(reasons.items())) + ".")
    s = summary.get("selfcheck")
    if s:
        sec.blocks.append(
            f"**Self-check.** Each answer of {', '.join(f'`{x}`' for x in s.get('answerers') or [])} was asked again "
            f"{s.get('k')} times at temperature {fmt(s.get('temperature'))} (seeds {', '.join(map(str, s.get('seeds') or []))}). "
            "*Agreement*: share of the repeats that gave the recorded answer; *consistent*: all did (at least two "
            "repeats measured). A right answer the model does not reproduce (*unstable right*) is guess evidence, "
            "whatever the structural guess class says; *of them grounded* counts the guesses the structural check "
            "cannot see.")
        sec.blocks.append(Table("Self-check per answerer and variant",
                                ["answerer", "variant", "samples", "checked", "consistent", "agreement",
                                 "right checked", "unstable right", "share", "of them grounded", "of them lucky",
                                 "repeat accuracy", "failed repeats"],
                                [[r["answerer"], r["variant"], fmt(r["samples"]), fmt(r["checked"]),
                                  fmt(r["consistency"]), fmt(r["agreement"]), fmt(r["right_checked"]),
                                  fmt(r["unstable_right"]), fmt(r["unstable_right_share"]), fmt(r["unstable_grounded"]),
                                  fmt(r["unstable_lucky"]), fmt(r["repeat_accuracy"]), fmt(r["failed_repeats"])]
                                 for r in s.get("variants") or []], align=["l", "l"] + ["r"] * 11))
    if sec.blocks:
        out.append(sec)
    return out


def run_sections(run_dir: Path | str) -> list[Any]:
    """:func:`judge_sections` of the run's ``judge.json`` (none when it has none)."""
    from benchmark.judge.apply import read_summary

    return judge_sections(read_summary(Path(run_dir)))


def judge_markdown(summary: dict[str, Any]) -> str:
    """The section alone as Markdown (``judge.md``)."""
    from benchmark.report.markdown import render_markdown

    return render_markdown(judge_sections(summary), f"diagqa judge — {summary.get('run_id', '')}")
