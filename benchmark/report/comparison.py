"""Comparing retrievers honestly: controls apart, a paired ranking of the candidates, their cost,
the sensitivity claim with its paired evidence, and the comparison of two runs.

Controls (selectors ``none``, ``full``, ``oracle``) bound what retrieval can do and are never
ranked. Candidates are compared on the *same questions*: per answerer, each candidate against
the best one, with McNemar's exact test for 0/1 outcomes (accuracy, grounded accuracy,
sufficiency) and a paired cluster bootstrap (whole diagrams resampled) for SRR and F1 and for
every difference's interval; p-values are Holm-corrected within each answerer and metric
(:mod:`benchmark.metrics.paired`).

>>> rows = [{"variant": v, "answerer": "a", "question_id": q, "diagram_id": "d" + q[-1], "correct": c, "sufficient": c,
...          "guess_class": "grounded" if c else "retrieval_miss", "srr": float(c), "f1": float(c), "abstained": False,
...          "answer_value": c, "answer_raw": str(c), "context_tokens": 10, "retrieval_s": 0.01, "error_stage": None}
...         for v, cs in (("oracle+d2+good", [1] * 8), ("oracle+d2+bad", [0] * 8), ("oracle+d2+full", [1] * 8))
...         for q, c in zip(["q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8"], cs)]
>>> t = ranking(pd.DataFrame(rows), seed=0, n_boot=200)
>>> list(t["variant"]), list(t["rank"]), round(t.loc[1, "accuracy_p_holm"], 4)
(['oracle+d2+good', 'oracle+d2+bad'], [1, 2], 0.0078)
"""
from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from benchmark.metrics.paired import cluster_bootstrap_ci, holm, mcnemar, paired_bootstrap
from benchmark.report.aggregate import _answer_key, _objects, is_control, mean_of, scored

#: the significance level used for verdicts (after Holm's correction)
ALPHA = 0.05
#: 0/1 outcomes, tested with McNemar; shares, tested with the paired bootstrap
BINARY = ("accuracy", "grounded_accuracy", "sufficiency")
SHARES = ("srr", "f1")

#: the sample columns the comparisons read
READS = ("question_id", "diagram_id", "variant", "answerer", "correct", "guess_class", "sufficient", "srr", "f1",
         "context_tokens", "retrieval_s", "answer_value", "answer_raw")


def _scored(df: pd.DataFrame) -> pd.DataFrame:
    """The scored samples (:func:`scored`) with only the columns the comparisons read: the samples
    frame has some forty, and every selection and group of it would copy them all."""
    return scored(df, [c for c in READS if c in df.columns])


def _per_question(g: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """question id -> the sample's paired values (errors unmeasured: ``None``)."""
    out = {}
    for r in g.itertuples(index=False):
        err = r.guess_class == "error"
        out[r.question_id] = {
            "diagram": r.diagram_id,
            "accuracy": None if err or r.correct is None else float(bool(r.correct)),
            "grounded_accuracy": None if err or r.guess_class is None else float(r.guess_class == "grounded"),
            "sufficiency": None if r.sufficient is None else float(bool(r.sufficient)),
            "srr": r.srr, "f1": r.f1,
        }
    return out


def _paired(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]], metric: str
            ) -> tuple[list[Any], list[Any], list[Any]]:
    qs = sorted(set(a) & set(b))
    return [a[q][metric] for q in qs], [b[q][metric] for q in qs], [a[q]["diagram"] for q in qs]


def compare_pair(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]], seed: int, n_boot: int,
                 key: str) -> dict[str, Any]:
    """Every metric of ``a`` against ``b`` on their shared questions: the difference a - b with its
    cluster-bootstrap interval, and the p-value (McNemar for 0/1 outcomes, paired bootstrap for shares)."""
    out: dict[str, Any] = {"pairs": len(set(a) & set(b))}
    for metric in (*BINARY, *SHARES):
        xa, xb, cl = _paired(a, b, metric)
        d = paired_bootstrap(xa, xb, seed, n_boot, clusters=cl, key=f"{key}|{metric}")
        out[f"{metric}_diff"], out[f"{metric}_diff_low"], out[f"{metric}_diff_high"] = d.diff, d.low, d.high
        out[f"{metric}_p"] = mcnemar(xa, xb).p if metric in BINARY else d.p
        out[f"{metric}_missing"] = d.missing
    return out


def _cost(g: pd.DataFrame) -> dict[str, Any]:
    tokens = [t for t in g["context_tokens"] if t is not None]
    lat = [t for t in g["retrieval_s"] if t is not None]
    return {"context_tokens": float(np.mean(tokens)) if tokens else None,
            "retrieval_p50_s": float(np.median(lat)) if lat else None,
            "retrieval_p95_s": float(np.quantile(lat, 0.95)) if lat else None}


def ranking(df: pd.DataFrame, seed: int = 0, n_boot: int = 1000) -> pd.DataFrame:
    """Per answerer, the candidate variants ranked by grounded accuracy (then accuracy, SRR, name), each
    with its means, cluster-bootstrap intervals, context size and retrieval latency, and its paired
    comparison with the best candidate (differences, p-values, Holm-corrected p-values); empty
    without candidates."""
    s = _scored(df)
    rows = []
    for answerer, ga in s.groupby("answerer", sort=False):
        per = {v: _per_question(g) for v, g in ga.groupby("variant", sort=False) if not is_control(v)}
        if not per or _receives_nothing(ga, list(per)):
            continue  # no candidate, or an answerer that receives no context: every retriever is the same to it
        groups = {v: g for v, g in ga.groupby("variant", sort=False)}
        stats = {}
        for v, vals in per.items():
            qs = sorted(vals)
            cl = [vals[q]["diagram"] for q in qs]
            st: dict[str, Any] = {}
            for metric in (*BINARY, *SHARES):
                xs = [vals[q][metric] for q in qs]
                st[metric] = mean_of(xs)
                st[f"{metric}_low"], st[f"{metric}_high"] = cluster_bootstrap_ci(
                    xs, cl, seed, n_boot, key=f"rank|{answerer}|{v}|{metric}")
            stats[v] = st
        order = sorted(per, key=lambda v: (-(stats[v]["grounded_accuracy"] or 0.0), -(stats[v]["accuracy"] or 0.0),
                                           -(stats[v]["srr"] or 0.0), v))
        best = order[0]
        block = []
        for rank, v in enumerate(order, 1):
            row = {"answerer": answerer, "rank": rank, "variant": v, "n": len(per[v]), **stats[v], **_cost(groups[v])}
            if v != best:
                row.update(compare_pair(per[v], per[best], seed, n_boot, f"rank|{answerer}|{v}|{best}"))
            block.append(row)
        for metric in (*BINARY, *SHARES):
            adjusted = holm([r.get(f"{metric}_p") for r in block])
            for r, p in zip(block, adjusted):
                r[f"{metric}_p_holm"] = p
        rows.extend(block)
    return _objects(pd.DataFrame(rows))


def _full_sizes(s: pd.DataFrame) -> dict[tuple[str, Any], int]:
    """(finder+source, question id) -> tokens of the whole diagram as that finder and source deliver it:
    the context of the run's ``<finder>+<source>+full`` variant for that question."""
    out: dict[tuple[str, Any], int] = {}
    for v, q, t in zip(s["variant"], s["question_id"], s["context_tokens"]):
        prefix, _, selector = str(v).rpartition("+")
        if selector == "full" and t is not None:
            out[(prefix, q)] = max(out.get((prefix, q), 0), int(t))
    return out


def context_share(g: pd.DataFrame, full: dict[tuple[str, Any], int]) -> dict[str, Any]:
    """The retrieval trade-off of one variant's samples: the largest context, the mean size of the
    whole diagram on the same questions, and the mean share of it the context kept (context tokens /
    whole-diagram tokens, per sample). ``None`` where the run has no ``full`` variant to compare with.

    >>> g = pd.DataFrame({"variant": ["f+d2+k"] * 2, "question_id": ["a", "b"], "context_tokens": [10, 30]})
    >>> context_share(g, {("f+d2", "a"): 100, ("f+d2", "b"): 60})
    {'context_tokens_max': 30, 'full_tokens': 80.0, 'context_share': 0.3}
    """
    tokens = [t for t in g["context_tokens"] if t is not None]
    pairs = [(int(t), full[(str(v).rpartition("+")[0], q)])
             for v, q, t in zip(g["variant"], g["question_id"], g["context_tokens"])
             if t is not None and (str(v).rpartition("+")[0], q) in full]
    shares = [t / f for t, f in pairs if f > 0]
    return {"context_tokens_max": int(max(tokens)) if tokens else None,
            "full_tokens": float(np.mean([f for _, f in pairs])) if pairs else None,
            "context_share": float(np.mean(shares)) if shares else None}


def costs(df: pd.DataFrame) -> pd.DataFrame:
    """Per variant (controls and candidates), over the answerers that received a context: context size
    in tokens (mean and largest), the whole diagram's size on the same questions and the share of it
    the context kept (:func:`context_share`), and the median and 95th-percentile seconds spent finding
    and selecting it."""
    s = _scored(df)
    blind = {a for a, ga in s.groupby("answerer", sort=False) if _receives_nothing(ga, list(dict.fromkeys(ga["variant"])))}
    s = s[~s["answerer"].isin(blind)] if blind else s
    full = _full_sizes(s)
    rows = []
    for v, g in s.groupby("variant", sort=False):
        rows.append({"variant": v, "control": is_control(v), **_cost(g), **context_share(g, full)})
    return _objects(pd.DataFrame(rows))


def _receives_nothing(ga: pd.DataFrame, candidates: list[str]) -> bool:
    """Whether the answerer received an empty context under every candidate (it reads no context: its
    answers cannot depend on the retriever). Frames without context sizes fall back to whether some
    question got different answers under different candidates."""
    sizes = [t for v, t in zip(ga["variant"], ga["context_tokens"]) if v in candidates]
    if sizes and all(t is not None for t in sizes):
        return all(t == 0 for t in sizes)
    seen: dict[str, set[Any]] = {}
    for q, v, val, raw in zip(ga["question_id"], ga["variant"], ga["answer_value"], ga["answer_raw"]):
        if v in candidates:
            seen.setdefault(q, set()).add(_answer_key({"answer_value": val, "answer_raw": raw}))
    return not any(len(keys) > 1 for keys in seen.values())


def sensitivity(df: pd.DataFrame, seed: int = 0, n_boot: int = 1000) -> dict[str, Any]:
    """The claim "answer accuracy is a less sensitive signal of retrieval quality than SRR", computed on
    candidate retrievers only, for the answerers whose accuracy can vary with the context.

    Per answerer: the spread (max - min) of accuracy and of SRR over the candidates, and over every
    pair of candidates how many differ significantly (Holm-corrected, ``ALPHA``) in accuracy (McNemar)
    and in SRR (paired cluster bootstrap). The claim holds for an answerer when SRR tells more pairs
    apart than accuracy does; answerers that receive no context (``blind``) are left out and named,
    with the reason.
    """
    s = _scored(df)
    per_answerer, excluded = [], []
    for answerer, ga in s.groupby("answerer", sort=False):
        candidates = [v for v in dict.fromkeys(ga["variant"]) if not is_control(v)]
        if len(candidates) < 2:
            excluded.append({"answerer": answerer, "reason": "fewer than two candidate retrievers"})
            continue
        if _receives_nothing(ga, candidates):
            excluded.append({"answerer": answerer, "reason": "it receives no context, so its accuracy cannot vary "
                                                             "with the retriever (a spread of 0 by construction)"})
            continue
        per = {v: _per_question(g) for v, g in ga.groupby("variant", sort=False) if v in candidates}
        acc_p, srr_p, acc_d, srr_d = [], [], [], []
        for v1, v2 in combinations(candidates, 2):
            xa, xb, _ = _paired(per[v1], per[v2], "accuracy")
            acc_p.append(mcnemar(xa, xb).p)
            acc_d.append(mean_of([a - b for a, b in zip(xa, xb) if a is not None and b is not None]))
            ya, yb, cl = _paired(per[v1], per[v2], "srr")
            d = paired_bootstrap(ya, yb, seed, n_boot, clusters=cl, key=f"claim|{answerer}|{v1}|{v2}")
            srr_p.append(d.p)
            srr_d.append(d.diff)
        acc_h, srr_h = holm(acc_p), holm(srr_p)
        acc_means = [mean_of([x["accuracy"] for x in per[v].values()]) for v in candidates]
        srr_means = [mean_of([x["srr"] for x in per[v].values()]) for v in candidates]

        def spread(xs: list[Any]) -> float | None:
            xs = [x for x in xs if x is not None]
            return float(max(xs) - min(xs)) if len(xs) >= 2 else None

        acc_sig = sum(1 for p in acc_h if p is not None and p < ALPHA)
        srr_sig = sum(1 for p in srr_h if p is not None and p < ALPHA)
        per_answerer.append({"answerer": answerer, "candidates": len(candidates), "pairs": len(acc_p),
                             "spread_accuracy": spread(acc_means), "spread_srr": spread(srr_means),
                             "pairs_accuracy_differs": acc_sig, "pairs_srr_differs": srr_sig,
                             "srr_more_sensitive": srr_sig > acc_sig})
    verdicts = [r["srr_more_sensitive"] for r in per_answerer]
    verdict = ("unmeasured" if not verdicts else "holds" if all(verdicts)
               else "holds only in part" if any(verdicts) else "does not hold")
    return {"per_answerer": per_answerer, "excluded": excluded, "verdict": verdict, "alpha": ALPHA}


def compare_runs(a: pd.DataFrame, b: pd.DataFrame, seed: int = 0, n_boot: int = 1000) -> pd.DataFrame:
    """Run A against run B, per variant x answerer present in both, on the questions both answered:
    each metric's mean in A and B, the difference A - B with its cluster-bootstrap interval, the
    p-value (McNemar / paired bootstrap) and the Holm-corrected p-value (over the groups, per metric).

    >>> rows = lambda cs: pd.DataFrame([{"variant": "v", "answerer": "x", "question_id": f"q{i}", "diagram_id": f"d{i}",
    ...     "correct": c, "sufficient": True, "guess_class": "grounded" if c else "misread", "srr": 1.0, "f1": 1.0,
    ...     "error_stage": None} for i, c in enumerate(cs)])
    >>> t = compare_runs(rows([1] * 10), rows([0] * 10), n_boot=200)
    >>> t.loc[0, "pairs"], t.loc[0, "accuracy_a"], t.loc[0, "accuracy_b"], round(t.loc[0, "accuracy_p"], 4)
    (10, 1.0, 0.0, 0.002)
    """
    sa, sb = _scored(a), _scored(b)
    gb = {k: g for k, g in sb.groupby(["variant", "answerer"], sort=False)}
    rows = []
    for key, g in sa.groupby(["variant", "answerer"], sort=False):
        if key not in gb:
            continue
        pa, pb = _per_question(g), _per_question(gb[key])
        shared = sorted(set(pa) & set(pb))
        row: dict[str, Any] = {"variant": key[0], "answerer": key[1], "only_a": len(set(pa) - set(pb)),
                               "only_b": len(set(pb) - set(pa))}
        for metric in (*BINARY, *SHARES):
            row[f"{metric}_a"] = mean_of([pa[q][metric] for q in shared])
            row[f"{metric}_b"] = mean_of([pb[q][metric] for q in shared])
        row.update(compare_pair(pa, pb, seed, n_boot, f"compare|{key[0]}|{key[1]}"))
        rows.append(row)
    for metric in (*BINARY, *SHARES):
        adjusted = holm([r[f"{metric}_p"] for r in rows])
        for r, p in zip(rows, adjusted):
            r[f"{metric}_p_holm"] = p
    return _objects(pd.DataFrame(rows))
