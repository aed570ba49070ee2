"""The report's view of one sample: a flat row of the values its tables read (no pandas here).

:func:`frame_row` turns a sample record (or a dict of the same shape) into a tuple in
:data:`FRAME_COLUMNS` order; :func:`benchmark.report.aggregate.frame` stacks such rows into the
samples frame. Re-scoring processes build the rows themselves, so what travels back from them is
only what the report reads.

The context's text is kept only for lucky guesses, the one place the report shows it (the list of
lucky guesses); elsewhere ``context_text`` is ``None``.
"""
from __future__ import annotations

import re
from typing import Any, Iterator

#: the per-sample columns the tables read from ``metrics`` (see benchmark.metrics.sample); ``error`` is the
#: kind of the answerer's failure (the sample is then unmeasured), ``precision_reason`` why precision is
#: unmeasured, ``sufficient_if_aligned`` whether an extracted context would prove the answer once aligned
METRIC_COLUMNS = ("correct", "sufficient", "guess_class", "srr", "precision", "f1", "node_srr", "faithfulness",
                  "n_claims", "claims_supported", "claims_unsupported", "claims_fabricated", "answer_value",
                  "abstained", "error", "precision_reason", "sufficient_if_aligned", "evidence_recall",
                  "evidence_precision")

#: per-sample cost columns: the received context's size in tokens (:func:`count_tokens`), the seconds spent
#: finding, loading and selecting it, and the seconds the answerer took
COST_COLUMNS = ("context_tokens", "retrieval_s", "answer_s")

#: every column of the samples frame, in order
FRAME_COLUMNS = ("sample_id", "question_id", "diagram_id", "variant", "answerer", "selector", "qtype",
                 "counter_prior", "twin_question", "question_text", "gold", "answer_raw", "answer_error",
                 "answer_error_kind", "answer_usage", "context_text", "finder", "finder_rank", "source",
                 "found_diagram", "twin_of", "error_stage", "error_message", *METRIC_COLUMNS, *COST_COLUMNS)

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


def count_tokens(text: str | None) -> int:
    """Tokens of a context text: each run of word characters and each other non-space character
    (a fixed, tokenizer-free count, the same for every model).

    >>> count_tokens("Auth Service -> Orders DB [reads]"), count_tokens(""), count_tokens(None)
    (9, 0, 0)
    """
    return len(_TOKEN.findall(text)) if text else 0

_EMPTY: dict[str, Any] = {}


_SAME: Any = object()


def frame_row(rec: Any, metrics: Any = _SAME, error: Any = _SAME) -> tuple[Any, ...]:
    """The frame row of a sample record or of a dict shaped like one (``SampleRecord.to_json()``),
    with ``metrics`` and ``error`` in place of the record's own when given. A NaN metric (a JSON
    ``NaN``) is unmeasured, as ``None``.

    >>> row = frame_row({"sample_id": "s", "question_id": "q", "diagram_id": "d", "variant": "v", "answerer": "a",
    ...                  "selector": "full", "question": {"type": "reachable", "text": "?", "answer": True},
    ...                  "context": {"text": "A -> B"}, "metrics": {"guess_class": "grounded", "srr": 1.0}})
    >>> r = dict(zip(FRAME_COLUMNS, row)); r["qtype"], r["srr"], r["context_text"], r["faithfulness"]
    ('reachable', 1.0, None, None)
    """
    r = rec if isinstance(rec, dict) else vars(rec)
    q = r["question"]
    m = (r.get("metrics") if metrics is _SAME else metrics) or _EMPTY
    error = (r.get("error") if error is _SAME else error) or _EMPTY
    answer, context = r.get("answer") or _EMPTY, r.get("context") or _EMPTY
    timings = r.get("timings") or _EMPTY
    parts = [timings[k] for k in ("find_s", "source_s", "select_s") if timings.get(k) is not None]
    return (r["sample_id"], r["question_id"], r["diagram_id"], r["variant"], r["answerer"], r["selector"],
            q["type"], bool(q.get("counter_prior")), (q.get("extra") or _EMPTY).get("twin_question"), q["text"],
            q["answer"], answer.get("raw"), answer.get("error"), answer.get("error_kind"), answer.get("usage"),
            context.get("text") if m.get("guess_class") == "lucky_guess" else None,
            r.get("finder"), r.get("finder_rank"), r.get("source"), r.get("found_diagram"), q.get("twin_of"),
            error.get("stage"), error.get("message"),
            *(None if v != v else v for v in (m.get(k) for k in METRIC_COLUMNS)),  # v != v: NaN
            count_tokens(context.get("text")) if context else None, round(sum(parts), 6) if parts else None,
            timings.get("answer_s"))


class RowStore:
    """The report rows of a run, kept while it goes: one list per column, not a tuple (or a record) per sample.

    Values repeat from row to row (variant and answerer names, a question's text under every variant,
    a handful of distinct scores): :meth:`add` keeps one object per distinct string or float, so the
    rows of a run ten times as large take far less than ten times the memory of its records.
    :meth:`to_frame` moves the columns into the samples frame one at a time and empties the store, so
    the rows are never held twice while the report is made (a tuple per row, turned into a frame, would
    be, and the memory of many small tuples is seldom given back to the system once freed).
    """

    def __init__(self) -> None:
        self._cols: list[list[Any]] = []
        self._pool: dict[Any, Any] = {}

    def add(self, row: tuple[Any, ...]) -> None:
        cols, pool = self._cols, self._pool
        if not cols:
            cols.extend([] for _ in row)
        elif len(row) != len(cols):
            raise ValueError(f"a report row of {len(row)} values among rows of {len(cols)}")
        cols[0].append(row[0])  # the first column is the sample id, unique to its row: nothing to share
        for col, v in zip(cols[1:], row[1:]):
            col.append(pool.setdefault(v, v) if type(v) is str or type(v) is float else v)

    def __len__(self) -> int:
        return len(self._cols[0]) if self._cols else 0

    def __getitem__(self, i: int) -> tuple[Any, ...]:
        return tuple(col[i] for col in self._cols)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return zip(*self._cols) if self._cols else iter(())

    def to_frame(self) -> Any:
        """The samples frame (as :func:`benchmark.report.aggregate.frame` makes it, :data:`FRAME_COLUMNS`,
        every column of dtype object) of the rows; the store is left empty."""
        import numpy as np
        import pandas as pd

        cols, n = self._cols, len(self)
        if not cols:
            cols.extend([] for _ in FRAME_COLUMNS)
        if len(cols) != len(FRAME_COLUMNS):
            raise ValueError(f"report rows of {len(cols)} values, the samples frame has {len(FRAME_COLUMNS)} columns")
        block = np.empty((len(cols), n), dtype=object)
        for j in range(len(cols)):
            # fromiter keeps each value as one object (a list-valued answer is not unpacked)
            block[j] = np.fromiter(cols[j], dtype=object, count=n)
            cols[j] = []
        self._cols, self._pool = [], {}
        return pd.DataFrame(block.T, columns=list(FRAME_COLUMNS), dtype=object, copy=False)


def reads_samples_file(records: Any) -> bool:
    """Whether a report's ``records`` are only its rows (tuples, a :class:`RowStore`, or the samples frame
    made from them): the parts of the report that need whole records then read ``samples.jsonl``.

    >>> reads_samples_file([("s", "q")]), reads_samples_file([{"sample_id": "s"}]), reads_samples_file(RowStore())
    (True, False, True)
    """
    import pandas as pd

    if isinstance(records, (RowStore, pd.DataFrame)):
        return True
    return bool(records) and isinstance(records[0], tuple)
