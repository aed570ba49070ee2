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
from typing import Any, Iterable, Iterator

import numpy as np
import pandas as pd

from benchmark.metrics.paired import cluster_bootstrap_ci, holm, mcnemar, paired_bootstrap
from benchmark.report.aggregate import (_answer_key, _class_is, _columns, _factorized, _groups, _is_error, _is_none,
                                       _objects, as_array, floats, is_control, last_by_question, mean_of, picked,
                                       row_numbers, rows_by)
from benchmark.report.rows import Coded, Floats

#: the significance level used for verdicts (after Holm's correction)
ALPHA = 0.05
#: 0/1 outcomes, tested with McNemar; shares, tested with the paired bootstrap
BINARY = ("accuracy", "grounded_accuracy", "sufficiency")
SHARES = ("srr", "f1")

#: the sample columns the comparisons read
READS = ("question_id", "diagram_id", "variant", "answerer", "correct", "guess_class", "sufficient", "srr", "f1",
         "context_tokens", "retrieval_s", "answer_value", "answer_raw")


#: the scored samples' columns as plain lists (column -> values); a group of them is a list of row positions
Columns = dict[str, list[Any]]


def _scored(df: pd.DataFrame) -> Columns:
    """The scored samples' columns that the comparisons read, as plain lists (:func:`_columns`): the samples
    frame has some forty columns, and selecting and grouping frames copied them for every group."""
    return _columns(df, [c for c in READS if c in df.columns], only_scored=True)


def _by_answerer(s: Columns) -> dict[Any, dict[Any, list[int]]]:
    """answerer -> variant -> its rows, each in the order first seen (as ``groupby(sort=False)``, rows
    with no answerer or variant left out)."""
    out: dict[Any, dict[Any, list[int]]] = {}
    for (answerer, variant), rows in _groups(s, ["answerer", "variant"], sort=False).items():
        out.setdefault(answerer, {})[variant] = rows
    return out


class PerQuestion:
    """The paired values of one candidate's samples (``rows`` of ``s``) by question: each question once, in
    the order first met, with its last sample's values (the last of a question met twice). ``array(metric)``
    gives ``diagram`` (an array of objects) or a metric (floats, NaN where unmeasured: errors, ``None``) of
    every question in that order; the arrays are made from the columns when first asked for and kept (a
    few bytes a question), not a mapping of question to values.

    >>> s = {"question_id": ["a", "b", "a"], "diagram_id": ["d", "d", "e"], "guess_class": ["grounded", "error", "misread"],
    ...      "correct": [True, None, False], "sufficient": [True, False, None], "srr": [1.0, 0.5, None], "f1": [1.0, None, 0.5]}
    >>> p = PerQuestion(s, [0, 1, 2]); list(p), p.array("diagram").tolist(), p.array("grounded_accuracy").tolist()
    (['a', 'b'], ['e', 'd'], [0.0, nan])
    >>> p.array("accuracy").tolist(), p.array("sufficiency").tolist(), p.array("srr").tolist()
    ([0.0, nan], [nan, 0.0], [nan, 0.5])
    """

    def __init__(self, s: Columns, rows: Any) -> None:
        self._s = s
        self._questions, self._rows = last_by_question(s["question_id"], rows)
        self._arrays: dict[str, np.ndarray] = {}

    def __iter__(self) -> Iterator[Any]:
        return iter(self._questions)

    def __len__(self) -> int:
        return len(self._questions)

    @property
    def questions(self) -> np.ndarray:
        """The question ids, in the order first met (an array of objects)."""
        return self._questions

    def array(self, metric: str) -> np.ndarray:
        got = self._arrays.get(metric)
        if got is None:
            got = self._arrays[metric] = self._make(metric)
        return got

    def _make(self, metric: str) -> np.ndarray:
        s, rows = self._s, self._rows
        if metric == "diagram":
            diagrams = picked(s["diagram_id"], rows)
            return np.fromiter(diagrams, dtype=object, count=len(diagrams))
        if metric in ("srr", "f1"):
            return floats(picked(s[metric], rows))
        if metric == "sufficiency":
            return as_array(picked(s["sufficient"], rows), _truth, float)
        guess = picked(s["guess_class"], rows)
        if metric == "accuracy":
            correct = as_array(picked(s["correct"], rows), _truth, float)
            correct[as_array(guess, _is_error, bool)] = np.nan
            return correct
        if metric == "grounded_accuracy":
            return as_array(guess, _class_is("grounded"), float)
        raise KeyError(metric)

    def order(self) -> np.ndarray:
        """The positions of the questions sorted by id."""
        return np.argsort(self.questions, kind="stable")


def _truth(v: Any) -> float:
    """A 0/1 outcome as a float (``None``: NaN)."""
    return np.nan if v is None else float(bool(v))


def _shared(a: PerQuestion, b: PerQuestion) -> tuple[np.ndarray, np.ndarray]:
    """The positions in ``a`` and in ``b`` of the questions both have, sorted by question id."""
    _, ia, ib = np.intersect1d(a.questions, b.questions, assume_unique=True, return_indices=True)
    return ia, ib


def _paired(a: PerQuestion, b: PerQuestion, metric: str, shared: tuple[np.ndarray, np.ndarray]
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``metric`` of ``a`` and of ``b`` on their ``shared`` questions (:func:`_shared`), and ``a``'s diagrams."""
    ia, ib = shared
    return a.array(metric)[ia], b.array(metric)[ib], a.array("diagram")[ia]


def compare_pair(a: PerQuestion, b: PerQuestion, seed: int, n_boot: int, key: str) -> dict[str, Any]:
    """Every metric of ``a`` against ``b`` on their shared questions: the difference a - b with its
    cluster-bootstrap interval, and the p-value (McNemar for 0/1 outcomes, paired bootstrap for shares)."""
    shared = _shared(a, b)
    out: dict[str, Any] = {"pairs": len(shared[0])}
    for metric in (*BINARY, *SHARES):
        xa, xb, cl = _paired(a, b, metric, shared)
        d = paired_bootstrap(xa, xb, seed, n_boot, clusters=cl, key=f"{key}|{metric}")
        out[f"{metric}_diff"], out[f"{metric}_diff_low"], out[f"{metric}_diff_high"] = d.diff, d.low, d.high
        out[f"{metric}_p"] = mcnemar(xa, xb).p if metric in BINARY else d.p
        out[f"{metric}_missing"] = d.missing
    return out


def _measured(values: Any) -> np.ndarray:
    """The values that are not ``None``, in order, as floats (a column's values picked for a group)."""
    if type(values) is Floats:
        doubles, none = values.arrays()
        return doubles[~none]
    return floats(values)[~as_array(values, _is_none, bool)]


def _cost(s: Columns, rows: Any) -> dict[str, Any]:
    tokens = _measured(picked(s["context_tokens"], rows))
    lat = _measured(picked(s["retrieval_s"], rows))
    return {"context_tokens": float(np.mean(tokens)) if len(tokens) else None,
            "retrieval_p50_s": float(np.median(lat)) if len(lat) else None,
            "retrieval_p95_s": float(np.quantile(lat, 0.95)) if len(lat) else None}


def ranking(df: pd.DataFrame, seed: int = 0, n_boot: int = 1000) -> pd.DataFrame:
    """Per answerer, the candidate variants ranked by grounded accuracy (then accuracy, SRR, name), each
    with its means, cluster-bootstrap intervals, context size and retrieval latency, and its paired
    comparison with the best candidate (differences, p-values, Holm-corrected p-values); empty
    without candidates."""
    s = _scored(df)
    rows = []
    for answerer, groups in _by_answerer(s).items():
        per = {v: PerQuestion(s, g) for v, g in groups.items() if not is_control(v)}
        if not per or _receives_nothing(s, groups, list(per)):
            continue  # no candidate, or an answerer that receives no context: every retriever is the same to it
        stats = {}
        for v, vals in per.items():
            qs = vals.order()
            cl = vals.array("diagram")[qs]
            st: dict[str, Any] = {}
            for metric in (*BINARY, *SHARES):
                xs = vals.array(metric)[qs]
                st[metric] = mean_of(xs)
                st[f"{metric}_low"], st[f"{metric}_high"] = cluster_bootstrap_ci(
                    xs, cl, seed, n_boot, key=f"rank|{answerer}|{v}|{metric}")
            stats[v] = st
        order = sorted(per, key=lambda v: (-(stats[v]["grounded_accuracy"] or 0.0), -(stats[v]["accuracy"] or 0.0),
                                           -(stats[v]["srr"] or 0.0), v))
        best = order[0]
        block = []
        for rank, v in enumerate(order, 1):
            row = {"answerer": answerer, "rank": rank, "variant": v, "n": len(per[v]), **stats[v], **_cost(s, groups[v])}
            if v != best:
                row.update(compare_pair(per[v], per[best], seed, n_boot, f"rank|{answerer}|{v}|{best}"))
            block.append(row)
        for metric in (*BINARY, *SHARES):
            adjusted = holm([r.get(f"{metric}_p") for r in block])
            for r, p in zip(block, adjusted):
                r[f"{metric}_p_holm"] = p
        rows.extend(block)
    return _objects(pd.DataFrame(rows))


def _numbered(values: Any, f: Any = None) -> tuple[np.ndarray, int]:
    """``f`` of each row's value (the value itself without ``f``) as a number, equal results numbered alike, and how
    many numbers there are: of a coded column, its distinct values mapped and numbered once and each row's
    number picked by its value's (without ``f``, the column's own numbers, no copy: a store's values are
    distinct); else the results factorized (:func:`~benchmark.report.aggregate._factorized`).

    >>> from array import array
    >>> codes, n = _numbered(Coded(["x+a", "y+b", "x+c"], array("B", [2, 1, 0])), lambda v: v[0]); codes.tolist(), n
    ([0, 1, 0], 2)
    """
    if type(values) is Coded:
        if f is None:
            return values.numbers, len(values.values)
        codes, uniques = pd.factorize(np.fromiter(map(f, values.values), dtype=object, count=len(values.values)),
                                      use_na_sentinel=False)
        return values.take(codes.astype(np.min_scalar_type(max(len(uniques) - 1, 0)))), len(uniques)
    codes, uniques = _factorized(values if f is None else list(map(f, values)))
    return codes, len(uniques)


class WholeSizes:
    """Tokens of the whole diagram per (finder+source, question), as that finder and source deliver it: the
    context of the run's ``<finder>+<source>+full`` variant for that question (the largest, among the rows it
    is made from). Kept as a table of numbers, one row per finder+source and one column per question value,
    with each sample's row and column in it (a few bytes a sample), not a mapping keyed by pairs.

    ``tokens`` is each sample's context size (-1 where unmeasured); :meth:`at` the whole diagram's of samples.
    """

    def __init__(self, s: Columns, rows: Any = None) -> None:
        """From the samples ``rows`` of ``s`` (positions; every sample when ``None``)."""
        variant = s["variant"]
        self._question, n_questions = _numbered(s["question_id"])
        self._prefix, n_prefixes = _numbered(variant, lambda v: str(v).rpartition("+")[0])
        self.tokens = as_array(s["context_tokens"], lambda t: -1 if t is None else int(t), np.int32)
        full = as_array(variant, lambda v: str(v).rpartition("+")[2] == "full", bool) & (self.tokens >= 0)
        if rows is not None:
            among = np.zeros(len(full), dtype=bool)
            among[np.asarray(rows, dtype=np.int64)] = True
            full &= among
        at = np.flatnonzero(full)   # (the full contexts: a share of the samples)
        self._table = np.full((n_prefixes, n_questions), -1, dtype=np.int64)
        np.maximum.at(self._table, (self._prefix[at], self._question[at]), self.tokens[at])

    def at(self, rows: np.ndarray) -> np.ndarray:
        """The whole diagram's tokens for each of the samples ``rows`` (-1 where the run has no such ``full``
        context for its question)."""
        return self._table[self._prefix[rows], self._question[rows]]


def context_share(s: Columns, rows: Any, whole: WholeSizes) -> dict[str, Any]:
    """The retrieval trade-off of one variant's samples (``rows`` of ``s``): the largest context, the mean
    size of the whole diagram on the same questions, and the mean share of it the context kept (context
    tokens / whole-diagram tokens, per sample). ``None`` where the run has no ``full`` variant to compare with.

    >>> s = {"variant": ["f+d2+full", "f+d2+full", "f+d2+k", "f+d2+k", "g+d2+k"], "question_id": ["a", "b", "a", "b", "a"],
    ...      "context_tokens": [100, 60, 10, 30, 5]}
    >>> whole = WholeSizes(s)
    >>> context_share(s, [2, 3], whole), context_share(s, [4], whole)["context_share"]
    ({'context_tokens_max': 30, 'full_tokens': 80.0, 'context_share': 0.3}, None)
    """
    rows = np.asarray(rows, dtype=np.int64)
    size, full = whole.tokens[rows], whole.at(rows)
    measured = size[size >= 0]
    both = (size >= 0) & (full >= 0)   # samples whose size and whole diagram's size are known
    kept, total = size[both].astype(float), full[both].astype(float)
    shares = kept[total > 0] / total[total > 0]
    return {"context_tokens_max": int(measured.max()) if len(measured) else None,
            "full_tokens": float(np.mean(total)) if len(total) else None,
            "context_share": float(np.mean(shares)) if len(shares) else None}


def costs(df: pd.DataFrame) -> pd.DataFrame:
    """Per variant (controls and candidates), over the answerers that received a context: context size
    in tokens (mean and largest), the whole diagram's size on the same questions and the share of it
    the context kept (:func:`context_share`), and the median and 95th-percentile seconds spent finding
    and selecting it."""
    s = _scored(df)
    by_answerer = _by_answerer(s)
    blind = {a for a, groups in by_answerer.items() if _receives_nothing(s, groups, list(groups))}
    answerer, variant = s["answerer"], s["variant"]
    kept: Iterable[int] = range(len(answerer))
    if blind:
        seen = row_numbers(len(answerer))
        seen.extend(i for i, a in enumerate(answerer) if a not in blind)
        kept = seen
    whole = WholeSizes(s, kept if blind else None)
    # rows without a variant are left out, as groupby leaves them out
    by_variant = rows_by(((i, variant[i]) for i in kept if variant[i] is not None), len(variant))
    rows = [{"variant": v, "control": is_control(v), **_cost(s, g), **context_share(s, g, whole)}
            for v, g in by_variant.items()]
    return _objects(pd.DataFrame(rows))


def _receives_nothing(s: Columns, groups: dict[Any, Any], candidates: list[str]) -> bool:
    """Whether an answerer (its rows by variant, ``groups``) received an empty context under every
    candidate (it reads no context: its answers cannot depend on the retriever). Samples without
    context sizes fall back to whether some question got different answers under different candidates."""
    rows = np.concatenate([np.empty(0, dtype=np.int64)] +
                          [np.asarray(groups[v], dtype=np.int64) for v in candidates if v in groups])
    sizes = picked(s["context_tokens"], rows)   # (a coded column's distinct sizes are looked at once each)
    if len(rows) and not as_array(sizes, _is_none, bool).any():
        return bool(as_array(sizes, lambda t: t == 0, bool).all())
    seen: dict[str, set[Any]] = {}
    for i in rows.tolist():
        key = _answer_key({"answer_value": s["answer_value"][i], "answer_raw": s["answer_raw"][i]})
        seen.setdefault(s["question_id"][i], set()).add(key)
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
    for answerer, groups in _by_answerer(s).items():
        candidates = [v for v in groups if not is_control(v)]
        if len(candidates) < 2:
            excluded.append({"answerer": answerer, "reason": "fewer than two candidate retrievers"})
            continue
        if _receives_nothing(s, groups, candidates):
            excluded.append({"answerer": answerer, "reason": "it receives no context, so its accuracy cannot vary "
                                                             "with the retriever (a spread of 0 by construction)"})
            continue
        per = {v: PerQuestion(s, groups[v]) for v in candidates}
        acc_p, srr_p, acc_d, srr_d = [], [], [], []
        for v1, v2 in combinations(candidates, 2):
            shared = _shared(per[v1], per[v2])
            xa, xb, _ = _paired(per[v1], per[v2], "accuracy", shared)
            acc_p.append(mcnemar(xa, xb).p)
            acc_d.append(mean_of(xa - xb))   # NaN (unmeasured) on either side: left out
            ya, yb, cl = _paired(per[v1], per[v2], "srr", shared)
            d = paired_bootstrap(ya, yb, seed, n_boot, clusters=cl, key=f"claim|{answerer}|{v1}|{v2}")
            srr_p.append(d.p)
            srr_d.append(d.diff)
        acc_h, srr_h = holm(acc_p), holm(srr_p)
        acc_means = [mean_of(per[v].array("accuracy")) for v in candidates]
        srr_means = [mean_of(per[v].array("srr")) for v in candidates]

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
    gb = _groups(sb, ["variant", "answerer"], sort=False)
    rows = []
    for key, g in _groups(sa, ["variant", "answerer"], sort=False).items():
        if key not in gb:
            continue
        pa, pb = PerQuestion(sa, g), PerQuestion(sb, gb[key])
        ia, ib = _shared(pa, pb)
        row: dict[str, Any] = {"variant": key[0], "answerer": key[1], "only_a": len(pa) - len(ia),
                               "only_b": len(pb) - len(ib)}
        for metric in (*BINARY, *SHARES):
            row[f"{metric}_a"] = mean_of(pa.array(metric)[ia])
            row[f"{metric}_b"] = mean_of(pb.array(metric)[ib])
        row.update(compare_pair(pa, pb, seed, n_boot, f"compare|{key[0]}|{key[1]}"))
        rows.append(row)
    for metric in (*BINARY, *SHARES):
        adjusted = holm([r[f"{metric}_p"] for r in rows])
        for r, p in zip(rows, adjusted):
            r[f"{metric}_p_holm"] = p
    return _objects(pd.DataFrame(rows))
