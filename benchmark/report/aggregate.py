"""From sample records to the numbers of the report: one flat frame, then grouped tables.

Every table is a pure function of the frame. Rates are means of per-sample values, so each
comes with a seeded percentile-bootstrap 95 % interval; ``None`` (unmeasured) values are left
out of a mean and counted in a ``*_missing`` column, never averaged as NaN.

* accuracy            mean of ``correct``
* grounded accuracy   mean of ``guess_class == grounded`` (correct *and* sufficient context)
* guess rate          mean of ``lucky_guess`` over the correct samples (= lucky / correct)
* accuracy inflation  accuracy - grounded accuracy (= mean of ``lucky_guess`` over all)

* accuracy (attempted) mean of ``correct`` over the answers that did not abstain; coverage = their share
* errors              answerer failures: unmeasured (left out of every rate), counted

>>> rows = [{"variant": "v", "answerer": "a", "correct": c, "guess_class": g, "srr": s, "node_srr": s,
...          "precision": None, "f1": None, "sufficient": g in ("grounded", "misread"), "faithfulness": None,
...          "error_stage": None, "abstained": g == "abstained_appropriate"}
...         for c, g, s in [(True, "grounded", 1.0), (True, "lucky_guess", 0.5), (False, "retrieval_miss", 0.0),
...                         (False, "abstained_appropriate", 0.0), (None, "error", 0.0)]]
>>> t = summary_table(pd.DataFrame(rows), seed=0, n_boot=200)
>>> [round(t.loc[0, k], 3) for k in ("accuracy", "accuracy_attempted", "coverage", "grounded_accuracy", "guess_rate",
...                                  "accuracy_inflation")]
[0.5, 0.667, 0.75, 0.25, 0.5, 0.25]
>>> int(t.loc[0, "errors"]), int(t.loc[0, "abstained"]), int(t.loc[0, "accuracy_missing"]), t.loc[0, "precision"] is None
(1, 1, 1, True)
"""
from __future__ import annotations

import hashlib
import math
import zlib
from array import array
from collections import Counter
from typing import Any, Iterable

import numpy as np
import pandas as pd

from benchmark.report.columns import SampleColumns
from benchmark.report.rows import FRAME_COLUMNS, Coded, Floats, RowStore, frame_row, present

GROUP = ["variant", "answerer"]
CORRECT_CLASSES = ("grounded", "lucky_guess")
#: every class a sample can have (as benchmark.metrics.guess.GUESS_CLASSES; not imported: no graph modules here)
ALL_CLASSES = ("grounded", "lucky_guess", "misread", "retrieval_miss", "extraction_error", "abstained_appropriate",
               "abstained_miss", "error")
#: the four cells of the guess table
GUESS_CLASSES = ("grounded", "lucky_guess", "misread", "retrieval_miss")
#: selectors that are controls, not candidates: nothing, everything, the gold certificate itself
CONTROL_SELECTORS = ("none", "full", "oracle")


def is_control(variant: str) -> bool:
    """Whether a variant (``finder+source+selector``) is a control: its selector gives nothing, the whole
    diagram or the gold certificate. Controls bound the candidates; a headline never picks one.

    >>> is_control("oracle+d2+full"), is_control("oracle+d2+oracle"), is_control("oracle+d2+khop2")
    (True, True, False)
    """
    return str(variant).rsplit("+", 1)[-1] in CONTROL_SELECTORS
#: SRR buckets: [low, high) except the last, which holds 1.0
SRR_BUCKETS = ((0.0, 0.25), (0.25, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.0))
#: the claim under test: faithfulness at or above this ...
FAITHFUL = 0.9
#: ... above this SRR
SRR_HIGH = 0.7

# -- the frame ------------------------------------------------------------------------------------

def frame(records: Iterable[Any]) -> "pd.DataFrame | SampleColumns":
    """One row per sample (:data:`FRAME_COLUMNS`): ids, question facts, the metric columns (``None`` when
    unmeasured), error stage. ``records`` are sample records, dicts of their shape, or rows already
    made by :func:`benchmark.report.rows.frame_row` (tuples); a frame already made is returned as it is,
    and a :class:`benchmark.report.rows.RowStore` becomes a
    :class:`benchmark.report.columns.SampleColumns`, which takes the store's coded columns (leaving it
    empty) and gives the tables pandas objects of the few columns each reads (every table function takes
    either)."""
    if isinstance(records, (pd.DataFrame, SampleColumns)):
        return records
    if isinstance(records, RowStore):
        return SampleColumns(records.take())   # the store given is left empty
    rows = [rec if isinstance(rec, tuple) else frame_row(rec) for rec in records]
    return pd.DataFrame(rows, columns=list(FRAME_COLUMNS), dtype=object)  # None stays None (unmeasured)


def scored(df: pd.DataFrame, columns: Iterable[str] | None = None) -> pd.DataFrame:
    """The samples that have metrics (no stage error before scoring); with ``columns``, only those (and
    the two the test reads), selected before the rows so the frame's other columns are not copied."""
    if isinstance(df, SampleColumns):
        return df.scored(FRAME_COLUMNS if columns is None else columns)
    if columns is not None:
        df = df[list(dict.fromkeys([*columns, "guess_class", "correct"]))]
    return df[df["guess_class"].notna() | df["correct"].notna()]


def _columns(df: pd.DataFrame, names: Iterable[str], only_scored: bool = False) -> dict[str, list[Any]]:
    """Columns of ``df`` as plain lists (``None`` kept), of the scored samples only when asked:
    grouping and averaging lists of a few thousand values is far cheaper than slicing frames. Of a
    :class:`~benchmark.report.columns.SampleColumns`, read-only sequences of the same values (its
    :meth:`~benchmark.report.columns.SampleColumns.lists`): indexed, iterated and counted, never changed."""
    if isinstance(df, SampleColumns):
        return df.lists(names, only_scored)
    names = list(dict.fromkeys(names))
    if not only_scored:
        return {n: df[n].tolist() for n in names}
    # the rows kept are chosen first, so each column is listed once, for those rows only
    guess, correct = df["guess_class"].to_numpy(), df["correct"].to_numpy()
    keep = np.fromiter((g is not None or c is not None for g, c in zip(guess, correct)), dtype=bool, count=len(guess))
    return {n: df[n].to_numpy()[keep].tolist() for n in names}


#: row positions as 4-byte integers (an ``array``), 8-byte ones past 2**31 rows
ROW_TYPE, WIDE_ROW_TYPE = "i", "q"


def row_numbers(n: int) -> array:
    """An empty array for positions among ``n`` rows: 4 bytes a position where a list holds an 8-byte
    pointer to a 28-byte integer (row groups of a run of a million samples: 4 MB, not 36 MB)."""
    return array(ROW_TYPE if n < 2**31 else WIDE_ROW_TYPE)


def _groups(cols: dict[str, list[Any]], keys: list[str], sort: bool) -> dict[tuple[Any, ...], array]:
    """Row positions by the values of ``keys`` (as ``DataFrame.groupby``: first-seen or sorted order,
    rows with a ``None`` key left out), each group's as an array (:func:`row_numbers`).

    >>> g = _groups({"a": ["x", "y", None, "x"], "b": [1, 1, 1, 2]}, ["a"], sort=False)
    >>> {k: list(v) for k, v in g.items()}
    {('x',): [0, 3], ('y',): [1]}
    """
    n = len(cols[keys[0]]) if keys else 0
    found = rows_by(((i, key) for i, key in enumerate(zip(*(cols[k] for k in keys))) if None not in key), n)
    return dict(sorted(found.items())) if sort else found


def rows_by(keyed: Iterable[tuple[int, Any]], n: int) -> dict[Any, array]:
    """Row positions by key, from ``(position, key)`` pairs among ``n`` rows, keys in the order first met,
    each key's positions as an array (:func:`row_numbers`).

    >>> {k: list(v) for k, v in rows_by([(0, "b"), (2, "a"), (5, "b")], 6).items()}
    {'b': [0, 5], 'a': [2]}
    """
    found: dict[Any, array] = {}
    for i, key in keyed:
        rows = found.get(key)
        if rows is None:
            rows = found[key] = row_numbers(n)
        rows.append(i)
    return found


def _pick(values: list[Any], rows: Iterable[int]) -> list[Any]:
    return [values[i] for i in rows]


def picked(values: Any, rows: Any) -> Any:
    """A column's values at the positions ``rows``: of a :class:`~benchmark.report.rows.Coded` column, a
    coded sequence of their numbers (a byte or two a row); of a :class:`~benchmark.report.rows.Floats`
    column, its doubles (nine bytes a row, not a float object); else a list.

    >>> list(picked(Coded(["a", "b"], array("B", [0, 1, 1])), array("i", [2, 0]))), picked(["a", "b", "c"], [2, 0])
    (['b', 'a'], ['c', 'a'])
    """
    if type(values) is Coded:
        return values.picked(rows)
    if type(values) is Floats:
        return values.copy(rows)
    return [values[i] for i in rows]


def derived(values: Any, f: Any) -> Any:
    """``f`` of every value of a column (a list, or a :class:`~benchmark.report.rows.Coded` sequence, whose
    distinct values alone are mapped: the result shares its numbers, nothing a row is made).

    >>> derived(["a", None, "a"], lambda v: v is None), list(derived(Coded(["a", None], array("B", [0, 1, 0])), str))
    ([False, True, False], ['a', 'None', 'a'])
    """
    if type(values) is Coded:
        return values.mapped(f)
    return [f(v) for v in values]


def last_by_question(questions: Any, rows: Any) -> tuple[np.ndarray, np.ndarray]:
    """The question ids among ``rows`` of a ``questions`` column, each once in the order first met (an array
    of objects), and each one's last row there (a question met twice: its last sample), as two arrays.

    >>> qs, last = last_by_question(["a", "b", "a", "c"], [0, 1, 2, 3]); qs.tolist(), last.tolist()
    (['a', 'b', 'c'], [2, 1, 3])
    >>> qs, last = last_by_question(Coded(["c", "a", "b"], array("B", [1, 2, 1, 0])), [0, 1, 2, 3]); qs.tolist(), last.tolist()
    (['a', 'b', 'c'], [2, 1, 3])
    >>> qs, last = last_by_question(Coded(["a", "a"], array("B", [0, 1, 0])), [0, 1, 2]); qs.tolist(), last.tolist()
    (['a'], [2])
    """
    rows = np.asarray(rows, dtype=np.int64)
    codes, uniques = _factorized(picked(questions, rows))
    # codes number the questions in the order first met; a question's last row is its first in reverse
    _, first_in_reverse = np.unique(codes[::-1], return_index=True)
    return np.asarray(uniques, dtype=object), rows[len(rows) - 1 - first_in_reverse]


def _factorized(ids: Any) -> tuple[np.ndarray, np.ndarray]:
    """``pd.factorize(ids, use_na_sentinel=False)`` of a column's values: of a coded column, its rows' value
    numbers factorized as integers (4 bytes a row or less, not an object a row), the same grouping wherever
    the values those numbers stand for are distinct; else the values themselves."""
    if type(ids) is Coded:
        codes, numbers = pd.factorize(ids.numbers)
        values = ids.values
        uniques = np.fromiter((values[k] for k in numbers), dtype=object, count=len(numbers))
        if pd.Index(uniques).is_unique:
            return codes, uniques
    return pd.factorize(np.fromiter(ids, dtype=object, count=len(ids)), use_na_sentinel=False)


def as_array(values: Any, f: Any, dtype: Any) -> np.ndarray:
    """``f`` of every value of a column as a numpy array of ``dtype`` (:func:`derived`; a coded column's
    distinct values mapped, then picked by its numbers).

    >>> as_array(Coded([0.5, None], array("B", [1, 0, 0])), lambda v: math.nan if v is None else v, float).tolist()
    [nan, 0.5, 0.5]
    """
    if type(values) is Coded:
        return values.take(np.fromiter((f(v) for v in values.values), dtype=dtype, count=len(values.values)))
    return np.fromiter((f(v) for v in values), dtype=dtype, count=len(values))


def matching(df: Any, name: str, f: Any) -> np.ndarray:
    """Whether ``f`` holds of each sample's ``name`` value, as a numpy bool array: a mask for ``df[mask]`` and
    ``df.loc[mask, ...]``. Of a :class:`~benchmark.report.columns.SampleColumns`, the column's distinct values
    are tested once and picked by its numbers (a byte a row), where ``df[name] == x`` makes a Series of every
    sample's value (an 8-byte pointer a row) and another of the results.

    >>> matching(pd.DataFrame({"g": ["lucky_guess", None, "grounded"]}), "g", lambda g: g == "lucky_guess").tolist()
    [True, False, False]
    """
    return as_array(_columns(df, [name])[name], lambda v: bool(f(v)), bool)


# -- statistics -----------------------------------------------------------------------------------

def _values(series: Iterable[Any]) -> tuple[np.ndarray, int]:
    """The measured values as floats, and how many were ``None`` (or NaN)."""
    arr = floats(series)
    mask = np.isnan(arr)
    return arr[~mask], int(mask.sum())


def floats(series: Iterable[Any]) -> np.ndarray:
    """Values as a numpy array of floats, as numpy converts each (``None``: NaN); a coded column's distinct
    values are converted once and picked by its numbers.

    >>> floats([True, None, 0.5]).tolist(), floats(Coded([None, 1], array("B", [1, 0, 1]))).tolist()
    ([1.0, nan, 0.5], [1.0, nan, 1.0])
    """
    if type(series) is Coded:
        return series.take(np.asarray(series.values, dtype=float))
    if type(series) is Floats:   # its doubles, NaN where None (a new array: the column's own are never written)
        doubles, none = series.arrays()
        return np.where(none, np.nan, doubles)
    return np.asarray(series if isinstance(series, (list, np.ndarray)) else list(series), dtype=float)


def mean_of(series: Iterable[Any]) -> float | None:
    """Mean of the measured values; ``None`` when there are none.

    >>> mean_of([1, None, 0]), mean_of([None])
    (0.5, None)
    """
    kept, _ = _values(series)
    return float(kept.mean()) if kept.size else None


#: at most this many distinct values are resampled as counts (a multinomial draw per resample)
COUNTED_VALUES = 32
#: values drawn at once when resampling by index (a block of resamples of 2**18 values: 3 MB)
RESAMPLE_BLOCK = 1 << 18
#: bootstrap intervals kept (:func:`_cached_interval`): equal values under one key are resampled once
KEPT_INTERVALS = 4096
_INTERVALS: dict[tuple[Any, ...], tuple[float, float]] = {}


def bootstrap(series: Iterable[Any], seed: int, key: str, n_boot: int = 1000, level: float = 0.95) -> tuple[float | None, float | None]:
    """Percentile-bootstrap interval of the mean (linear-interpolated quantiles), ``None`` values left out.

    The same resampling law as :func:`benchmark.metrics.stats.bootstrap_ci`, drawn with numpy so a
    report of a few hundred groups takes a fraction of a second; ``key`` (e.g. the group and the
    metric) is mixed into ``seed`` so each interval has its own recorded, stable stream, and the
    same values under the same key give the same interval (computed once).

    A resample of ``n`` values is ``n`` draws with replacement; when the values take few distinct
    levels (0/1 outcomes, recall fractions) only how many times each level is drawn matters, so a
    resample is drawn as those counts (binomial for two levels, multinomial for a few), which has
    exactly the law of drawing indices. Many distinct levels are resampled by index.

    >>> bootstrap([1, 1, 1], seed=0, key="k")
    (1.0, 1.0)
    >>> bootstrap([None], seed=0, key="k")
    (None, None)
    >>> low, high = bootstrap([0, 1] * 50, seed=0, key="k"); 0.35 < low < 0.5 < high < 0.65
    True
    >>> low, high = bootstrap([0.25, 0.5, 0.75] * 40, seed=0, key="k"); 0.45 < low < 0.5 < high < 0.55
    True
    """
    kept, _ = _values(series)
    if not kept.size:
        return None, None
    return _cached_interval(np.sort(kept).tobytes(), seed, key, n_boot, level)


def _cached_interval(sorted_values: bytes, seed: int, key: str, n_boot: int, level: float) -> tuple[float, float]:
    """:func:`_interval`, computed once for equal values under one key (tables share groups): the interval
    is kept under a digest of the values, not the values, which would hold a copy of every group's column
    (memory that grows with the run's samples). The oldest of :data:`KEPT_INTERVALS` goes first."""
    k = (hashlib.blake2b(sorted_values, digest_size=20).digest(), len(sorted_values), seed, key, n_boot, level)
    got = _INTERVALS.get(k)
    if got is None:
        while len(_INTERVALS) >= KEPT_INTERVALS:
            del _INTERVALS[next(iter(_INTERVALS))]
        got = _INTERVALS[k] = _interval(sorted_values, seed, key, n_boot, level)
    return got


def _interval(sorted_values: bytes, seed: int, key: str, n_boot: int, level: float) -> tuple[float, float]:
    kept = np.frombuffer(sorted_values, dtype=float)
    n = kept.size
    rng = np.random.default_rng([seed, zlib.crc32(key.encode("utf-8"))])
    levels, counts = np.unique(kept, return_counts=True)
    if levels.size == 1:
        means = np.full(n_boot, levels[0])
    elif levels.size == 2:
        # the mean of a resample is (count of the upper level) over n: one binomial per resample
        upper = rng.binomial(n, counts[1] / n, size=n_boot)
        means = (levels[0] * (n - upper) + levels[1] * upper) / n
    elif levels.size <= COUNTED_VALUES:
        means = rng.multinomial(n, counts / n, size=n_boot) @ levels / n
    else:
        # resampled by index, a block of resamples at a time: memory stays flat however many samples a group
        # holds, and the draws are the same stream as one (n_boot, n) draw would be
        means = np.empty(n_boot)
        per = max(1, RESAMPLE_BLOCK // n)
        for start in range(0, n_boot, per):
            k = min(per, n_boot - start)
            idx = rng.integers(0, n, size=(k, n), dtype=np.int32 if n < 2**31 else np.int64)
            means[start:start + k] = kept[idx].mean(axis=1)
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


def _with_ci(out: dict[str, Any], name: str, values: list[Any], seed: int, key: str, n_boot: int) -> None:
    kept, missing = _values(values)
    out[name] = float(kept.mean()) if kept.size else None
    out[f"{name}_low"], out[f"{name}_high"] = (
        _cached_interval(np.sort(kept).tobytes(), seed, f"{key}|{name}", n_boot, 0.95) if kept.size else (None, None))
    out[f"{name}_missing"] = missing


def _is(value: Any, *classes: str) -> bool | None:
    return None if value is None else value in classes


# -- tables ---------------------------------------------------------------------------------------

#: the main table's rate columns, in order (each has _low, _high, _missing)
MAIN_METRICS = ("accuracy", "grounded_accuracy", "srr", "precision", "f1", "sufficiency", "guess_rate",
                "accuracy_inflation", "faithfulness")


def group_metrics(g: pd.DataFrame | dict[str, list[Any]], seed: int, key: str, n_boot: int = 1000,
                  context_key: str | None = None) -> dict[str, Any]:
    """The main-table numbers for one group of samples (a frame, or its columns as lists).

    ``context_key`` seeds the intervals of what depends on the context alone (SRR, precision, F1,
    sufficiency), so answerers given the same contexts get the same intervals for them.
    """
    if isinstance(g, pd.DataFrame):
        g = _columns(g, _MAIN_COLUMNS)
    ckey = context_key or key
    classes = g["guess_class"]
    out: dict[str, Any] = {"n": len(g["error_stage"]),
                           "stage_errors": int((~as_array(g["error_stage"], _is_none, bool)).sum())}
    # the scored samples (a guess class or a ``correct`` value): each column read as a numpy array of them
    correct_measured = ~as_array(g["correct"], _is_none, bool)
    scored = ~as_array(classes, _is_none, bool) | correct_measured
    correct, correct_measured = floats(g["correct"])[scored], correct_measured[scored]
    abstained = as_array(g["abstained"], bool, bool)[scored]
    out["errors"] = int(as_array(classes, _is_error, bool)[scored].sum())   # answerer failed: unmeasured, not wrong
    out["abstained"] = int(abstained.sum())
    attempted = correct_measured & ~abstained
    out["attempted"] = int(attempted.sum())
    measured = int(correct_measured.sum())
    out["coverage"] = out["attempted"] / measured if measured else None
    _with_ci(out, "accuracy", correct, seed, key, n_boot)
    _with_ci(out, "accuracy_attempted", correct[attempted], seed, key, n_boot)
    # a class of None or "error" is unmeasured (NaN); the others 1.0 or 0.0
    _with_ci(out, "grounded_accuracy", as_array(classes, _class_is("grounded"), float)[scored], seed, key, n_boot)
    for col in ("srr", "node_srr", "precision", "f1"):
        _with_ci(out, col, floats(g[col])[scored], seed, ckey, n_boot)
    _with_ci(out, "sufficiency", floats(g["sufficient"])[scored], seed, ckey, n_boot)
    # over the correct answers only: a wrong answer is outside its denominator, not unmeasured
    lucky = as_array(classes, _class_is("lucky_guess"), float)[scored]
    _with_ci(out, "guess_rate", lucky[as_array(classes, _in_guess_rate, bool)[scored]], seed, key, n_boot)
    _with_ci(out, "accuracy_inflation", lucky, seed, key, n_boot)
    _with_ci(out, "faithfulness", floats(g["faithfulness"])[scored], seed, key, n_boot)
    counts = Counter(picked(classes, np.flatnonzero(scored)))
    for c in ALL_CLASSES:
        out[c] = counts.get(c, 0)
    return out


def _is_none(v: Any) -> bool:
    return v is None


def _is_error(c: Any) -> bool:
    return c == "error"


def _class_is(name: str) -> Any:
    """A guess class -> 1.0 when it is ``name``, 0.0 when another, NaN when unmeasured (``None`` or "error")."""
    return lambda c: math.nan if c is None or c == "error" else float(c == name)


def _in_guess_rate(c: Any) -> bool:
    """Whether a sample's class counts towards the guess rate: a correct answer's, or an unmeasured one."""
    return c is None or c == "error" or c in CORRECT_CLASSES


#: the columns :func:`group_metrics` reads
_MAIN_COLUMNS = ("error_stage", "guess_class", "correct", "srr", "node_srr", "precision", "f1", "sufficient",
                 "faithfulness", "abstained")


def summary_table(df: pd.DataFrame, seed: int = 0, n_boot: int = 1000) -> pd.DataFrame:
    """Per variant x answerer (in first-seen order): every main metric with its 95 % interval."""
    cols = _columns(df, [*GROUP, *_MAIN_COLUMNS])
    rows = []
    for (variant, answerer), idx in _groups(cols, GROUP, sort=False).items():
        g = {c: picked(cols[c], idx) for c in _MAIN_COLUMNS}
        rows.append({"variant": variant, "answerer": answerer, "control": is_control(variant),
                     **group_metrics(g, seed, f"{variant}|{answerer}", n_boot, context_key=variant)})
    return _objects(pd.DataFrame(rows))


def _objects(df: pd.DataFrame) -> pd.DataFrame:
    """Missing values as ``None`` (never NaN)."""
    return df.astype(object).where(df.notna(), None) if len(df) else df


def guess_tables(df: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per answerer, the 2x2 table of counts: rows correct / wrong, columns sufficient / insufficient."""
    out = {}
    cols = _columns(df, ["answerer", "guess_class"], only_scored=True)   # (no frame of the scored samples)
    classes = cols["guess_class"]
    for (answerer,), idx in _groups(cols, ["answerer"], sort=False).items():
        counts = Counter(classes[i] for i in idx)
        c = {k: int(counts.get(k, 0)) for k in GUESS_CLASSES}
        out[answerer] = pd.DataFrame({"sufficient context": [c["grounded"], c["misread"]],
                                      "insufficient context": [c["lucky_guess"], c["retrieval_miss"]]},
                                     index=["correct", "wrong"])
    return out


#: the columns of :func:`lucky_guesses`
LUCKY_COLUMNS = ["answerer", "variant", "question_id", "diagram_id", "qtype", "question_text", "gold", "answer_raw",
                 "srr", "context_text"]


def lucky_guesses(df: pd.DataFrame, listed: int | None = None) -> pd.DataFrame:
    """Every lucky guess (with ``listed``, only the first ``listed`` of each answerer, as the report lists
    them): question, gold, answer, context as the answerer saw it. A lucky guess without an answerer is
    listed only when all are.

    >>> df = pd.DataFrame({c: [None] * 4 for c in ["guess_class", *LUCKY_COLUMNS]})
    >>> df["guess_class"], df["answerer"], df["question_id"] = ["lucky_guess", "grounded", "lucky_guess", "lucky_guess"], "a", ["q1", "q2", "q3", "q4"]
    >>> lucky_guesses(df)["question_id"].tolist(), lucky_guesses(df, listed=1)["question_id"].tolist()
    (['q1', 'q3', 'q4'], ['q1'])
    """
    rows, answerers = _lucky(df)
    if listed is not None:
        seen: Counter[Any] = Counter()
        kept = []
        for i, answerer in zip(rows, answerers):
            if present(answerer):
                seen[answerer] += 1
                if seen[answerer] <= listed:
                    kept.append(i)
        rows = np.asarray(kept, dtype=np.int64)
    mask = np.zeros(len(df), dtype=bool)
    mask[rows] = True
    return df.loc[mask, LUCKY_COLUMNS].reset_index(drop=True)   # (only the columns shown, of those rows)


def lucky_counts(df: pd.DataFrame) -> dict[Any, int]:
    """Lucky guesses per answerer (:func:`answerer_counts` of theirs).

    >>> lucky_counts(pd.DataFrame({"guess_class": ["lucky_guess", "grounded", "lucky_guess"], "answerer": ["b", "a", "b"]}))
    {'b': 2}
    """
    return answerer_counts(_lucky(df)[1])


def _lucky(df: pd.DataFrame) -> tuple[np.ndarray, Any]:
    """The positions of the lucky guesses, and their answerers."""
    rows = np.flatnonzero(matching(df, "guess_class", lambda g: g == "lucky_guess"))
    return rows, picked(_columns(df, ["answerer"])["answerer"], rows)


def answerer_counts(answerers: Iterable[Any]) -> dict[Any, int]:
    """How many of ``answerers`` each answerer is, answerers in the order first met (``None``: those missing).

    >>> answerer_counts(["b", None, "a", "b", float("nan")])
    {'b': 2, None: 2, 'a': 1}
    """
    return dict(Counter(a if present(a) else None for a in answerers))


def breakdown(df: pd.DataFrame, column: str) -> pd.DataFrame:
    """Accuracy, grounded accuracy and sufficiency per answerer and value of ``column`` (over all variants)."""
    cols = _columns(df, ["answerer", column, "correct", "guess_class", "sufficient"], only_scored=True)
    rows = []
    for (answerer, value), idx in _groups(cols, ["answerer", column], sort=True).items():
        classes = picked(cols["guess_class"], idx)
        rows.append({"answerer": answerer, column: value, "n": len(idx),
                     "accuracy": mean_of(picked(cols["correct"], idx)),
                     "grounded_accuracy": mean_of([_is(c, "grounded") for c in classes]),
                     "sufficiency": mean_of(picked(cols["sufficient"], idx)),
                     "lucky_guesses": sum(1 for c in classes if c == "lucky_guess")})
    return _objects(pd.DataFrame(rows))


def _answer_key(row: dict[str, Any]) -> Any:
    v = row["answer_value"]
    if v is None:
        raw = row["answer_raw"]
        return ("raw", " ".join(str(raw).split()).casefold()) if raw is not None else None
    return ("value", repr(v))


def twin_consistency(df: pd.DataFrame) -> pd.DataFrame:
    """Per variant x answerer: twin pairs asked, and whether they were told apart -- the finder's part and
    the answerer's part separately.

    * ``finder_same``: pairs for which the finder returned one and the same diagram for both twins (the
      answerer then *cannot* tell them apart: that is the finder's confusion);
    * ``answered_differently``: among the pairs whose twins reached the answerer as their own two diagrams,
      the share answered differently (as they should be) -- the answerer's part;
    * ``answered_differently_all``: the same share over every pair (what a user of the pipeline sees).

    A pair where either answer is missing is counted in ``unmeasured``.
    """
    cols = ("twin_question", "answer_value", "answer_raw", "correct", "found_diagram", "diagram_id")
    s = _columns(df, [*GROUP, "question_id", *cols], only_scored=True)   # sequences: no frame copied per group
    rows = []
    twin, found, own, correct = s["twin_question"], s["found_diagram"], s["diagram_id"], s["correct"]

    def key(i: int) -> Any:
        return _answer_key({"answer_value": s["answer_value"][i], "answer_raw": s["answer_raw"][i]})

    for (variant, answerer), g in _groups(s, GROUP, sort=False).items():
        questions, last = last_by_question(s["question_id"], g)   # (a question met twice: its last sample)
        twins = np.fromiter(picked(twin, last), dtype=object, count=len(last))
        at = pd.Index(questions).get_indexer(twins) if len(questions) else np.empty(0, dtype=np.int64)
        paired = [k for k in np.flatnonzero(at >= 0) if twins[k]]   # a twin named, and asked in this group
        row_of = {questions[k]: int(last[k]) for j in paired for k in (j, at[j])}
        pairs = sorted({tuple(sorted((questions[k], twins[k]))) for k in paired})
        differ, differ_own, unmeasured, finder_same = [], [], 0, 0
        for a, b in pairs:
            ia, ib = row_of[a], row_of[b]
            same_found = found[ia] is not None and found[ia] == found[ib]
            finder_same += same_found
            ka, kb = key(ia), key(ib)
            if ka is None or kb is None:
                unmeasured += 1
                continue
            differ.append(ka != kb)
            if not same_found and found[ia] == own[ia] and found[ib] == own[ib]:
                differ_own.append(ka != kb)
        both_right = sum(1 for a, b in pairs if correct[row_of[a]] and correct[row_of[b]])
        rows.append({"variant": variant, "answerer": answerer, "pairs": len(pairs), "finder_same": finder_same,
                     "own_pairs": len(differ_own), "answered_differently": mean_of(differ_own),
                     "answered_differently_all": mean_of(differ), "both_correct": both_right,
                     "unmeasured": unmeasured})
    return _objects(pd.DataFrame(rows))


def faithfulness_table(df: pd.DataFrame, seed: int = 0, n_boot: int = 1000) -> pd.DataFrame:
    """Per variant x answerer: mean faithfulness (95 % CI), answers with claims, and the share of those
    with an unsupported or a fabricated claim."""
    cols = _columns(df, [*GROUP, "faithfulness", "n_claims", "claims_unsupported", "claims_fabricated"],
                    only_scored=True)
    rows = []
    for (variant, answerer), idx in _groups(cols, GROUP, sort=False).items():
        out: dict[str, Any] = {"variant": variant, "answerer": answerer}
        _with_ci(out, "faithfulness", picked(cols["faithfulness"], idx), seed, f"{variant}|{answerer}", n_boot)
        claimed = [i for i in idx if int(cols["n_claims"][i] or 0) > 0]
        out["with_claims"] = len(claimed)
        out["unmeasured"] = len(idx) - len(claimed)
        out["share_unsupported"] = mean_of([int(cols["claims_unsupported"][i]) > 0 for i in claimed]) if claimed else None
        out["share_fabricated"] = mean_of([int(cols["claims_fabricated"][i]) > 0 for i in claimed]) if claimed else None
        rows.append(out)
    return _objects(pd.DataFrame(rows))


#: each SRR bucket's label (one string object per bucket, however many samples fall in it)
SRR_BUCKET_LABELS = tuple(f"{lo:.2f}-{hi:.2f}" for lo, hi in SRR_BUCKETS)


def srr_bucket(srr: float | None) -> str | None:
    """The SRR bucket label of a value.

    >>> srr_bucket(0.1), srr_bucket(0.7), srr_bucket(1.0), srr_bucket(None)
    ('0.00-0.25', '0.70-0.90', '0.90-1.00', None)
    """
    if srr is None:
        return None
    for (lo, hi), label in zip(SRR_BUCKETS, SRR_BUCKET_LABELS):
        if lo <= srr < hi or (hi == 1.0 and srr >= hi):
            return label
    return None


def srr_buckets(df: pd.DataFrame) -> pd.DataFrame:
    """Per answerer and SRR bucket: samples, accuracy, sufficiency, mean faithfulness."""
    cols = _columns(df, ["answerer", "srr", "correct", "sufficient", "faithfulness"], only_scored=True)
    cols["srr_bucket"] = derived(cols["srr"], srr_bucket)
    rows = []
    for (answerer, bucket), idx in _groups(cols, ["answerer", "srr_bucket"], sort=True).items():
        faith = picked(cols["faithfulness"], idx)
        rows.append({"answerer": answerer, "srr_bucket": bucket, "n": len(idx),
                     "accuracy": mean_of(picked(cols["correct"], idx)),
                     "sufficiency": mean_of(picked(cols["sufficient"], idx)), "faithfulness": mean_of(faith),
                     "faithfulness_unmeasured": sum(1 for f in faith if f is None)})
    return _objects(pd.DataFrame(rows))


def auc(scores: Any, labels: Any) -> float | None:
    """Area under the ROC curve of ``scores`` for ``labels`` (ties count one half); ``None`` without both classes.

    >>> auc([0.1, 0.4, 0.35, 0.8], [False, False, True, True])
    0.75
    >>> auc([1, 1], [True, True]) is None
    True
    """
    scores, labels = np.asarray(scores, dtype=float), np.asarray(labels, dtype=bool)
    pos, neg = scores[labels], scores[~labels]
    if not len(pos) or not len(neg):
        return None
    ranks = pd.Series(np.concatenate([pos, neg])).rank(method="average").to_numpy()
    r_pos = ranks[: len(pos)].sum()
    return float((r_pos - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def float_or_nan(v: Any) -> float:
    """A measured value as a float, an unmeasured one (``None``) as NaN."""
    return math.nan if v is None else float(v)


class _ClaimColumns:
    """What the claim check reads of each scored sample, as numpy arrays of one byte a sample (:func:`as_array`):
    whether its SRR and sufficiency are measured, which side of the SRR line it is on, whether it is
    sufficient and right, and whether its faithfulness is measured, faithful or not. The scores themselves
    (for the AUCs) are read per answerer."""

    def __init__(self, cols: dict[str, Any]) -> None:
        srr, faith = cols["srr"], cols["faithfulness"]
        self.srr_none = as_array(srr, _is_none, bool)
        # an SRR of None or NaN is on neither side of the line
        self.above = as_array(srr, lambda v: v is not None and float(v) >= SRR_HIGH, bool)
        self.below = as_array(srr, lambda v: v is not None and float(v) < SRR_HIGH, bool)
        self.sufficient = as_array(cols["sufficient"], bool, bool)
        self.sufficient_none = as_array(cols["sufficient"], _is_none, bool)
        self.correct = as_array(cols["correct"], bool, bool)
        self.faith_measured = ~as_array(faith, _is_none, bool)
        self.faithful = as_array(faith, lambda v: v is not None and float(v) >= FAITHFUL, bool)
        self.unfaithful = as_array(faith, lambda v: v is not None and float(v) < FAITHFUL, bool)


def claim_check(df: pd.DataFrame, summary: pd.DataFrame) -> dict[str, Any]:
    """The numbers behind the report's claim under test (see :mod:`benchmark.report.markdown`).

    1. Sensitivity: per answerer, how well per-sample accuracy and SRR separate sufficient from
       insufficient contexts (AUC), and how far each spreads across variants (max - min of the
       variant means).
    2. Faithfulness: among samples with SRR >= 0.7 and measured faithfulness, the share with
       faithfulness >= 0.9; among *correct* samples with SRR < 0.7, the share with faithfulness < 0.9.

    The columns are read as numpy arrays of the scored samples (a byte or eight a sample), each answerer's
    rows picked from them.
    """
    cols = _columns(df, ["answerer", "srr", "sufficient", "correct", "faithfulness"], only_scored=True)
    by_answerer = _groups(cols, ["answerer"], sort=False)
    c = _ClaimColumns(cols)
    per_answerer = []
    for (answerer,), idx in by_answerer.items():
        rows = np.asarray(idx, dtype=np.int64)
        rows = rows[~c.srr_none[rows] & ~c.sufficient_none[rows]]
        labels = c.sufficient[rows]
        row: dict[str, Any] = {"answerer": answerer, "n": len(rows),
                               "auc_accuracy": auc(c.correct[rows].astype(float), labels),
                               "auc_srr": auc(floats(picked(cols["srr"], rows)), labels)}
        m = summary[summary["answerer"] == answerer]
        for col, name in (("accuracy", "spread_accuracy"), ("srr", "spread_srr")):
            vals = [v for v in m[col] if v is not None]
            row[name] = float(max(vals) - min(vals)) if len(vals) >= 2 else None
        row["srr_more_sensitive"] = (None if None in (row["auc_accuracy"], row["auc_srr"], row["spread_accuracy"],
                                                     row["spread_srr"])
                                     else row["auc_srr"] > row["auc_accuracy"] and row["spread_srr"] > row["spread_accuracy"])
        per_answerer.append(row)
    part2 = _faithfulness_part(c, None)
    return {
        "sensitivity": per_answerer,
        **part2,
        "faithfulness_by_answerer": [dict(answerer=a, **_faithfulness_part(c, np.asarray(idx, dtype=np.int64)))
                                     for (a,), idx in by_answerer.items()],
    }


def _faithfulness_part(c: _ClaimColumns, rows: np.ndarray | None) -> dict[str, Any]:
    """Part 2 of the claim on the scored samples ``rows`` (all when ``None``): share faithful above the SRR
    line, share of right answers unfaithful below it (answers without claims are unmeasured and counted)."""
    pick = slice(None) if rows is None else rows
    measured = c.faith_measured[pick]
    above = c.above[pick]
    below_right = c.below[pick] & c.correct[pick]
    high, low_right = c.faithful[pick][above & measured], c.unfaithful[pick][below_right & measured]
    share_high = mean_of(high) if len(high) else None
    share_low = mean_of(low_right) if len(low_right) else None
    return {
        "faithful_above": {"n": len(high), "share_faithful": share_high, "unmeasured": int(above.sum()) - len(high)},
        "unfaithful_right_below": {"n": len(low_right), "share_unfaithful": share_low,
                                   "unmeasured": int(below_right.sum()) - len(low_right)},
        "faithfulness_holds": None if share_high is None or share_low is None else bool(share_high >= 0.9 and share_low >= 0.5),
    }


def finding(df: pd.DataFrame) -> pd.DataFrame:
    """Per variant whose finder is not ``oracle``: questions, the share whose own diagram came first,
    in the top 5, and the mean reciprocal rank (a diagram not ranked counts 0); empty when all are oracle.

    >>> t = finding(pd.DataFrame({"variant": ["v"] * 3, "finder": ["f"] * 3, "question_id": ["a", "b", "c"],
    ...                           "finder_rank": [1, 3, None]}))
    >>> t.loc[0, "at_1"], t.loc[0, "at_5"], round(t.loc[0, "mrr"], 3), t.loc[0, "not_ranked"]
    (0.3333333333333333, 0.6666666666666666, 0.444, 1)
    """
    rows = []
    read = [c for c in ("variant", "question_id", "finder_rank", "twin_of", "found_diagram") if c in df]
    for variant, g in df.loc[matching(df, "finder", lambda f: f != "oracle"), read].groupby("variant", sort=False):
        per_q = g.groupby("question_id", sort=False).first()
        ranks = [None if r is None or (isinstance(r, float) and math.isnan(r)) else int(r) for r in per_q["finder_rank"]]
        twins = per_q[per_q["twin_of"].notna()] if "twin_of" in per_q else per_q.iloc[0:0]
        rows.append({"variant": variant, "questions": len(ranks),
                     "at_1": mean_of([r == 1 for r in ranks]), "at_5": mean_of([r is not None and r <= 5 for r in ranks]),
                     "mrr": mean_of([1 / r if r else 0.0 for r in ranks]), "not_ranked": sum(r is None for r in ranks),
                     "twin_questions": len(twins),
                     "twin_found": int((twins["found_diagram"] == twins["twin_of"]).sum()) if len(twins) else 0})
    return _objects(pd.DataFrame(rows))


def source_comparison(summary: pd.DataFrame) -> pd.DataFrame:
    """Per selector and answerer, the text path next to the image path: ``oracle+d2+X``, ``oracle+ocr+X``
    and every ``<finder>+ocr+X``, with accuracy, grounded accuracy, SRR and sufficiency of each.

    Only selectors run with more than one finder/source combination appear; empty otherwise.
    """
    if not len(summary):
        return _objects(pd.DataFrame())
    parts = summary["variant"].str.split("+", n=2, expand=True)
    s = summary.assign(finder=parts[0], source=parts[1], selector=parts[2])
    rows = []
    for (selector, answerer), g in s.groupby(["selector", "answerer"], sort=False):
        if g[["finder", "source"]].drop_duplicates().shape[0] < 2:
            continue
        order = sorted(g.itertuples(), key=lambda r: (r.source != "d2", r.finder != "oracle", r.finder))
        for r in order:
            rows.append({"selector": selector, "answerer": answerer, "variant": r.variant,
                         "accuracy": r.accuracy, "grounded_accuracy": r.grounded_accuracy,
                         "srr": r.srr, "sufficiency": r.sufficiency})
    return _objects(pd.DataFrame(rows))


def blind_floor(df: pd.DataFrame, seed: int = 0, n_boot: int = 1000, answerer: str = "blind") -> dict[str, Any] | None:
    """Accuracy of the ``blind`` answerer over every question (one sample per question), with its CI
    and per question type: the share of the dataset a guesser gets right with no context.

    Blind ignores the context, so its samples of one question (one per variant) are one answer: a question
    counts once, with the first value met among its scored samples of each column (as ``groupby().first()``).
    """
    s = _columns(df, ["answerer", "question_id", "qtype", "counter_prior", "correct"], only_scored=True)
    rows = np.flatnonzero(as_array(s["answerer"], lambda v: v == answerer, bool))
    questions, ids = _factorized(picked(s["question_id"], rows))
    known = np.fromiter((present(v) for v in ids), dtype=bool, count=len(ids))
    if not known.all():   # a row without a question id is left out (the others numbered in the same order)
        asked = known[questions]
        rows, questions, ids = rows[asked], (np.cumsum(known) - 1)[questions[asked]], ids[known]
    n = len(ids)
    if not n:
        return None

    def first(column: str) -> np.ndarray:
        """Each question's first value of ``column`` that is not None (None where it has none)."""
        values = picked(s[column], rows)
        has = ~as_array(values, _is_none, bool)
        got, at = np.unique(questions[has], return_index=True)
        out = np.full(n, None, dtype=object)
        out[got] = as_array(values, lambda v: v, object)[has][at]
        return out

    correct, qtype, counter_prior = first("correct"), first("qtype"), first("counter_prior")
    out: dict[str, Any] = {"questions": n}
    _with_ci(out, "accuracy", correct.tolist(), seed, f"{answerer}|floor", n_boot)
    out["by_type"] = {t: mean_of(correct[qtype == t].tolist()) for t in sorted(set(qtype.tolist()) - {None})}
    known = np.fromiter((v is not None for v in counter_prior), dtype=bool, count=n)
    flags = np.array([bool(v) for v in counter_prior[known]], dtype=bool)
    out["counter_prior"] = {str(k): mean_of(correct[known][flags == k].tolist()) for k in sorted(set(flags.tolist()))}
    return out
