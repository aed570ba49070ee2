"""The report's sections on choosing a retriever and on what is unmeasured: candidates and controls
apart, the paired ranking, context size and latency, the sensitivity claim with its paired
evidence, abstentions, answerer errors and why values are unmeasured."""
from __future__ import annotations

from collections import Counter
from typing import Any

import pandas as pd

from benchmark.report import aggregate as agg
from benchmark.report.rows import _missing
from benchmark.report.tables import Table, fmt, fmt_ci, short

#: answerer errors listed (all are counted)
ERRORS_LISTED = 30


def main_tables(summary: pd.DataFrame) -> list[Table]:
    """The main table, candidates and controls apart."""
    headers = ["variant", "answerer", "n", "accuracy", "acc. attempted", "coverage", "grounded acc.", "SRR",
               "node SRR", "precision", "F1", "sufficiency", "guess rate (of correct)", "inflation"]

    def row(r: Any) -> list[str]:
        notes = [f"{r['errors']} errors" if r.get("errors") else "", f"{r['abstained']} abstained" if r.get("abstained") else "",
                 f"{r['stage_errors']} stage errors" if r.get("stage_errors") else ""]
        n = fmt(r["n"]) + "".join(f" ({x})" for x in notes if x)
        return ([r["variant"], r["answerer"], n, fmt_ci(r, "accuracy"), fmt_ci(r, "accuracy_attempted"), fmt(r["coverage"])]
                + [fmt_ci(r, k) for k in ("grounded_accuracy", "srr", "node_srr", "precision", "f1", "sufficiency",
                                          "guess_rate", "accuracy_inflation")])

    out = []
    for control, caption in ((False, "Candidate retrievers, per variant × answerer (95 % CI)"),
                             (True, "Controls (none, full, oracle selectors): bounds, not candidates (95 % CI)")):
        part = summary[summary["control"] == control] if len(summary) else summary
        if len(part):
            out.append(Table(caption, headers, [row(r) for _, r in part.iterrows()], align=["l", "l"] + ["r"] * 12))
    return out


def _p(row: Any, metric: str) -> str:
    p = row.get(f"{metric}_p_holm")
    return "–" if p is None else ("< 0.001" if p < 0.001 else f"{p:.3f}")


def ranking_section(ranking: pd.DataFrame) -> list[Any]:
    """Per answerer, the candidates ranked, each compared with the best on the same questions."""
    if not len(ranking):
        return ["No candidate retriever in this run (only controls), or no answerer that receives a context: "
                "nothing to rank."]
    blocks: list[Any] = [
        "Candidates only, ranked per answerer by grounded accuracy. Each is compared with the first on the same "
        "questions: the difference (this − best) with a 95 % interval that resamples whole diagrams (cluster "
        "bootstrap), and Holm-corrected p-values per answerer and metric — McNemar's exact test for accuracy, "
        "grounded accuracy and sufficiency, a paired bootstrap for SRR and F1. Context size is the mean number "
        "of tokens of the context text (words and punctuation marks); latency is the time to find and select it. "
        "Answerers that receive no context (`blind`) are not ranked: every retriever is the same to them."]
    for answerer, g in ranking.groupby("answerer", sort=False):
        rows = []
        for _, r in g.iterrows():
            def diff(m: str) -> str:
                if r.get(f"{m}_diff") is None:
                    return "best" if r["rank"] == 1 else "–"
                return (f"{r[f'{m}_diff']:+.2f} [{fmt(r[f'{m}_diff_low'])}, {fmt(r[f'{m}_diff_high'])}] "
                        f"p={_p(r, m)}")
            rows.append([fmt(r["rank"]), r["variant"], fmt(r["n"]), fmt_ci(r, "grounded_accuracy"), diff("grounded_accuracy"),
                         fmt_ci(r, "accuracy"), diff("accuracy"), fmt_ci(r, "srr"), diff("srr"), diff("f1"),
                         diff("sufficiency"), fmt(r["context_tokens"], 1), fmt(r["retrieval_p50_s"], 4)])
        blocks.append(Table(f"{answerer}: candidates ranked (vs. the best, Holm-corrected)",
                            ["rank", "variant", "n", "grounded acc.", "Δ grounded", "accuracy", "Δ accuracy", "SRR",
                             "Δ SRR", "Δ F1", "Δ sufficiency", "context tokens", "latency p50 (s)"], rows,
                            align=["r", "l"] + ["r"] * 11))
    return blocks


def cost_table(costs: pd.DataFrame) -> Table:
    """Context size per variant against the whole diagram on the same questions: the retrieval trade-off."""
    def share(r: Any) -> str:
        v = r.get("context_share")
        return "–" if v is None or v != v else f"{100 * v:.0f} %"

    rows = [[r["variant"], "control" if r["control"] else "candidate", fmt(r["context_tokens"], 1),
             fmt(r.get("context_tokens_max"), 0), fmt(r.get("full_tokens"), 1), share(r),
             fmt(r["retrieval_p50_s"], 4), fmt(r["retrieval_p95_s"], 4)] for _, r in costs.iterrows()]
    return Table("Context size and retrieval latency per variant (answerers that received a context; the whole "
                 "diagram is the same finder and source's `full` context for the same questions)",
                 ["variant", "role", "context tokens (mean)", "context tokens (max)", "whole diagram tokens (mean)",
                  "share of the whole diagram", "latency p50 (s)", "latency p95 (s)"], rows,
                 align=["l", "l", "r", "r", "r", "r", "r", "r"])


def sensitivity_section(claim: dict[str, Any]) -> list[Any]:
    """Part 1 of the claim under test, computed over candidates and answerers whose accuracy can vary."""
    blocks: list[Any] = [
        "Part 1 is tested on candidate retrievers only (controls would inflate the spread) and only for answerers "
        "that receive a context (one that receives none has an accuracy spread of 0 by construction and is no "
        "evidence). For every pair of candidates, the paired tests of the ranking say "
        f"whether accuracy (McNemar) and SRR (paired cluster bootstrap) tell them apart (Holm, α = {claim['alpha']})."]
    per = claim["per_answerer"]
    if per:
        blocks.append(Table("Sensitivity over pairs of candidates",
                            ["answerer", "candidates", "pairs", "spread of accuracy", "spread of SRR",
                             "pairs accuracy tells apart", "pairs SRR tells apart", "SRR more sensitive"],
                            [[r["answerer"], fmt(r["candidates"]), fmt(r["pairs"]), fmt(r["spread_accuracy"]),
                              fmt(r["spread_srr"]), fmt(r["pairs_accuracy_differs"]), fmt(r["pairs_srr_differs"]),
                              fmt(r["srr_more_sensitive"])] for r in per], align=["l"] + ["r"] * 7))
    for e in claim["excluded"]:
        blocks.append(f"Left out of part 1: `{e['answerer']}` — {e['reason']}.")
    n_yes = sum(1 for r in per if r["srr_more_sensitive"])
    blocks.append(f"**Part 1 {claim['verdict']}**" + (
        f": SRR tells more candidate pairs apart than accuracy for {n_yes} of {len(per)} answerers." if per else
        ": no answerer whose accuracy can vary was run over two or more candidates."))
    return blocks


def outcomes_table(summary: pd.DataFrame) -> Table:
    """Every outcome class per variant × answerer (the guess table's four cells and the rest)."""
    cols = agg.ALL_CLASSES
    rows = [[r["variant"], r["answerer"]] + [fmt(int(r.get(c) or 0)) for c in cols] for _, r in summary.iterrows()]
    return Table("Outcomes per variant × answerer (counts)", ["variant", "answerer", *[c.replace("_", " ") for c in cols]],
                 rows, align=["l", "l"] + ["r"] * len(cols))


def unmeasured_section(df: pd.DataFrame) -> list[Any]:
    """Why values are unmeasured: answerer errors by kind (and the first few listed), precision's reasons.

    The scored samples' columns are read as sequences and counted (as ``groupby(...).size()``: rows with a
    missing key left out, the errors' keys sorted, the reasons in the order first met); a frame is made only
    of the errors listed, not of every scored sample (a variant that retrieves nothing has every one of its
    precisions unmeasured)."""
    blocks: list[Any] = []
    s = agg._columns(df, ["guess_class", "variant", "answerer", "question_id", "error", "answer_error", "precision",
                          "precision_reason", "faithfulness"], only_scored=True)
    variant, answerer = s["variant"], s["answerer"]

    def rows_of(names: list[str], rows: Any) -> pd.DataFrame:
        return pd.DataFrame({n: agg._pick(s[n], rows) for n in names}, columns=names, dtype=object)

    errors = agg.row_numbers(len(s["guess_class"]))
    errors.extend(i for i, c in enumerate(s["guess_class"]) if c == "error")
    if errors:
        kind = s["error"]
        counts = Counter((answerer[i], kind[i]) for i in errors if not (_missing(answerer[i]) or _missing(kind[i])))
        blocks.append(Table(f"Answerer errors ({len(errors)}): unmeasured, left out of accuracy, never counted wrong",
                            ["answerer", "kind", "samples"],
                            [[a, str(e), fmt(n)] for (a, e), n in sorted(counts.items())]))
        listed = rows_of(["variant", "answerer", "question_id", "error", "answer_error"], errors[:ERRORS_LISTED])
        blocks.append(Table(f"Answerer errors listed (first {len(listed)} of {len(errors)})",
                            ["variant", "answerer", "question", "kind", "message"],
                            [[r["variant"], r["answerer"], r["question_id"], str(r["error"]), short(r["answer_error"], 120)]
                             for _, r in listed.iterrows()]))
    else:
        blocks.append("No answerer error: every answer was measured.")
    reasons: Counter[tuple[Any, Any, Any]] = Counter()
    unmeasured = False
    for i, (p, r) in enumerate(zip(s["precision"], s["precision_reason"])):
        if _missing(p) and not _missing(r):
            unmeasured = True
            if not (_missing(variant[i]) or _missing(answerer[i])):
                reasons[(variant[i], answerer[i], r)] += 1
    if unmeasured:
        blocks.append(Table("Why precision is unmeasured (F1 counts these as 0)", ["variant", "answerer", "reason", "samples"],
                            [[v, a, r, fmt(n)] for (v, a, r), n in reasons.items()]))
    faith = sum(1 for v in s["faithfulness"] if _missing(v))
    if faith:
        blocks.append(f"Faithfulness is unmeasured for {faith} answers: they state no claims.")
    return blocks
