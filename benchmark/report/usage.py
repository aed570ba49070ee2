"""What answering cost and what the answers cited, per variant x answerer: tokens in and out, calls,
cache hits, latency p50/p95, cost (when prices are configured), failed answers by kind (the share
of unparsable replies among them) and evidence recall / precision against the gold certificate.
Tokens, cost and latency count the requests this run made: a cache hit was paid for earlier.

Answerers that report no usage (the reference answerers) get ``None`` for the usage columns; the
evidence columns are measured for every answerer that cites edges.

>>> import pandas as pd
>>> df = pd.DataFrame({"variant": ["v"] * 3, "answerer": ["llm"] * 3, "answer_error_kind": [None, "unparsable", None],
...     "answer_usage": [{"prompt_tokens": 10, "completion_tokens": 5, "calls": 1, "cache_hit": False, "latency_s": 1.0},
...                      {"prompt_tokens": 10, "completion_tokens": 9, "calls": 1, "cache_hit": False, "latency_s": 3.0},
...                      {"prompt_tokens": 10, "completion_tokens": 5, "calls": 0, "cache_hit": True, "latency_s": 0.0}],
...     "evidence_recall": [1.0, None, 0.5], "evidence_precision": [0.5, None, None]})
>>> r = usage_table(df).iloc[0].to_dict()
>>> r["tokens_in"], r["tokens_out"], r["calls"], r["cache_hits"], r["latency_p50"], r["latency_p95"], r["cost"]
(20, 14, 2, 1, 2.0, 2.9, None)
>>> r["failed"], r["unparsable"], r["unparsable_share"], r["evidence_recall"], r["evidence_precision"]
(1, 1, 0.3333333333333333, 0.75, 0.5)
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from benchmark.report.aggregate import _columns, _groups, matching

#: the columns :func:`usage_table` adds to summary.csv, in order
USAGE_COLUMNS = ("tokens_in", "tokens_out", "calls", "cache_hits", "latency_p50", "latency_p95", "cost", "failed",
                 "failed_by_kind", "unparsable", "unparsable_share", "evidence_recall", "evidence_precision",
                 "evidence_measured")


_COUNTS = ("tokens_in", "tokens_out", "calls", "cache_hits", "failed", "unparsable", "evidence_measured")


def _mean(values: list[Any]) -> float | None:
    vals = [float(v) for v in values if v is not None and v == v]
    return sum(vals) / len(vals) if vals else None


def usage_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per variant x answerer (first-seen order) with :data:`USAGE_COLUMNS`.

    Latency percentiles are over the answers that made a request (cache hits take no time worth
    counting); ``cost`` is summed where the answerer reported one, else ``None``.
    """
    rows = []
    if not len(df):
        return pd.DataFrame(columns=["variant", "answerer", *USAGE_COLUMNS])
    # the columns read, as sequences, and each group's row positions: no frame of them copied per group
    cols = _columns(df, ["variant", "answerer", "answer_usage", "answer_error_kind", "evidence_recall",
                         "evidence_precision"])
    usage, error_kind = cols["answer_usage"], cols["answer_error_kind"]
    recall, precision = cols["evidence_recall"], cols["evidence_precision"]
    for (variant, answerer), idx in _groups(cols, ["variant", "answerer"], sort=False).items():
        usages = [u for u in (usage[i] for i in idx) if isinstance(u, dict)]
        kinds = [str(k) for k in (error_kind[i] for i in idx) if isinstance(k, str)]
        by_kind = {k: kinds.count(k) for k in sorted(set(kinds))}
        row: dict[str, Any] = {"variant": variant, "answerer": answerer}
        if usages:
            paid = [u for u in usages if not u.get("cache_hit")]   # a cache hit's tokens were paid by an earlier run
            latencies = [float(u.get("latency_s") or 0.0) for u in paid if u.get("calls")]
            costs = [u["cost"] for u in paid if u.get("cost") is not None]
            row.update(tokens_in=sum(int(u.get("prompt_tokens") or 0) for u in paid),
                       tokens_out=sum(int(u.get("completion_tokens") or 0) for u in paid),
                       calls=sum(int(u.get("calls") or 0) for u in usages),
                       cache_hits=sum(1 for u in usages if u.get("cache_hit")),
                       latency_p50=float(np.percentile(latencies, 50)) if latencies else None,
                       latency_p95=float(np.percentile(latencies, 95)) if latencies else None,
                       cost=float(sum(costs)) if costs else None)
        else:
            row.update({k: None for k in ("tokens_in", "tokens_out", "calls", "cache_hits", "latency_p50",
                                          "latency_p95", "cost")})
        n = len(idx)
        row.update(failed=len(kinds), failed_by_kind=" ".join(f"{k}:{v}" for k, v in by_kind.items()) or None,
                   unparsable=by_kind.get("unparsable", 0), unparsable_share=by_kind.get("unparsable", 0) / n if n else None,
                   evidence_recall=_mean([recall[i] for i in idx]),
                   evidence_precision=_mean([precision[i] for i in idx]),
                   evidence_measured=sum(1 for i in idx if recall[i] is not None and recall[i] == recall[i]))
        rows.append(row)
    return _counts_as_ints(pd.DataFrame(rows))


def _counts_as_ints(df: pd.DataFrame) -> pd.DataFrame:
    """Missing values as ``None`` and the count columns as integers (a column with gaps is float in pandas)."""
    df = df.astype(object).where(df.notna(), None)
    for col in _COUNTS:
        if col in df:
            df[col] = pd.Series([None if v is None or v != v else int(v) for v in df[col]], index=df.index, dtype=object)
    return df


def with_usage(summary: pd.DataFrame, usage: pd.DataFrame) -> pd.DataFrame:
    """``summary`` with the usage columns joined on (variant, answerer), its row order kept."""
    if not len(summary):
        return summary
    return _counts_as_ints(summary.merge(usage, on=["variant", "answerer"], how="left", sort=False))


def usage_json(usage: pd.DataFrame) -> list[dict[str, Any]]:
    """The table as run.json holds it (one dict per variant x answerer)."""
    return [{k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()} for r in usage.to_dict("records")]


#: failed answers listed in the report (all are counted)
FAILED_LISTED = 30


def usage_section(usage: pd.DataFrame, samples: pd.DataFrame | None = None) -> Any:
    """The report section: usage where an answerer reported it, failures (counted, and the first
    :data:`FAILED_LISTED` listed from ``samples``) and evidence attribution."""
    from benchmark.report.document import Section
    from benchmark.report.tables import Table, fmt

    sec = Section("Usage, failed answers and evidence attribution")
    sec.blocks.append("Failed answers (a failed call, an unparsable reply, or a request not attempted after the "
                      "circuit breaker opened) are counted here by kind; they are not wrong answers. Evidence recall "
                      "is the share of the gold certificate's edges the answer cited (cited labels mapped to the "
                      "diagram's edges), evidence precision the share of cited edges that belong to the certificate; "
                      "for image input, where the answerer sees no text context, this is the only grounding signal.")
    rows = [[r["variant"], r["answerer"], fmt(r["failed"]), r["failed_by_kind"] or "–", fmt(r["unparsable_share"]),
             fmt(r["evidence_recall"]), fmt(r["evidence_precision"]), fmt(r["evidence_measured"]),
             fmt(r["tokens_in"]), fmt(r["tokens_out"]), fmt(r["calls"]), fmt(r["cache_hits"]),
             fmt(r["latency_p50"]), fmt(r["latency_p95"]), fmt(r["cost"], 4)] for _, r in usage.iterrows()]
    sec.blocks.append(Table("Per variant × answerer", ["variant", "answerer", "failed", "by kind", "unparsable share",
                                                       "evidence recall", "evidence precision", "with recall",
                                                       "tokens in", "tokens out", "calls", "cache hits",
                                                       "latency p50 (s)", "latency p95 (s)", "cost"], rows,
                            align=["l", "l", "r", "l"] + ["r"] * 11))
    if samples is not None and len(samples):
        # an answer error with a kind is a failure; the reference answerers' kind-less "error" is an abstention
        failed = samples[matching(samples, "answer_error_kind", lambda e: isinstance(e, str))]
        if len(failed):
            from benchmark.report.tables import short

            rows = [[r["variant"], r["answerer"], r["question_id"], str(r["answer_error_kind"] or "–"),
                     short(r["answer_error"], 120)] for _, r in failed.head(FAILED_LISTED).iterrows()]
            sec.blocks.append(Table(f"Failed answers ({len(failed)}; unmeasured, not wrong"
                                    + (f"; the first {FAILED_LISTED} listed" if len(failed) > FAILED_LISTED else "") + ")",
                                    ["variant", "answerer", "question", "kind", "error"], rows))
        else:
            sec.blocks.append("No answer failed.")
    return sec
