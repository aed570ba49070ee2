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
import zlib
from array import array
from typing import Any, Iterator

from benchmark.spill import Spill, keep, read

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

#: every column of the samples frame, in order (no sample id: a sample is its question, variant and answerer,
#: and no table reads the id; the sample explorer reads whole records from ``samples.jsonl``)
FRAME_COLUMNS = ("question_id", "diagram_id", "variant", "answerer", "selector", "qtype",
                 "counter_prior", "twin_question", "question_text", "gold", "answer_raw", "answer_error",
                 "answer_error_kind", "answer_usage", "context_text", "finder", "finder_rank", "source",
                 "found_diagram", "twin_of", "error_stage", "error_message", *METRIC_COLUMNS, *COST_COLUMNS)

#: the cost columns measured in seconds: seldom the same in two rows, so a store of frame rows keeps them as
#: doubles from the first row (:meth:`RowStore.for_samples`)
SECONDS_COLUMNS = ("retrieval_s", "answer_s")

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
    return (r["question_id"], r["diagram_id"], r["variant"], r["answerer"], r["selector"],
            q["type"], bool(q.get("counter_prior")), (q.get("extra") or _EMPTY).get("twin_question"), q["text"],
            q["answer"], answer.get("raw"), answer.get("error"), answer.get("error_kind"), answer.get("usage"),
            context.get("text") if m.get("guess_class") == "lucky_guess" else None,
            r.get("finder"), r.get("finder_rank"), r.get("source"), r.get("found_diagram"), q.get("twin_of"),
            error.get("stage"), error.get("message"),
            *(None if v != v else v for v in (m.get(k) for k in METRIC_COLUMNS)),  # v != v: NaN
            count_tokens(context.get("text")) if context else None, round(sum(parts), 6) if parts else None,
            timings.get("answer_s"))


_UNSHARED: Any = object()   # the key of a value that is not shared (see :func:`_key`)
_SCALARS = (int, float, bool, type(None))


def _key(v: Any) -> Any:
    """What identifies ``v`` among a column's values, so that equal values share one object: a string is
    its own key, other values are keyed with their type (``True``, ``1`` and ``1.0`` are equal in Python
    but are different answers), lists and dicts by their items in order; :data:`_UNSHARED` for a value
    that is not shared (a NaN, which equals nothing; any other kind of object).

    >>> _key("a"), _key(True) == _key(1), _key([1, "a"]) == _key([1, "a"]), _key({"n": 1}) == _key({"n": 1.0})
    ('a', False, True, False)
    """
    t = type(v)
    if t is str:
        return v
    if t in _SCALARS:
        return _UNSHARED if v != v else (t, v)  # v != v: NaN
    if t is list or t is dict:
        items = [(k, _key(x)) for k, x in v.items()] if t is dict else [_key(x) for x in v]
        if any(x is _UNSHARED or (type(x) is tuple and x[1] is _UNSHARED) for x in items):
            return _UNSHARED
        return (t, tuple(items))
    return _UNSHARED


def _missing(v: Any) -> bool:
    """Whether a value is missing as pandas' ``isna`` counts a scalar: ``None`` or NaN (numpy's too)."""
    return v is None or (isinstance(v, float) and v != v)  # v != v: NaN


def present(v: Any) -> bool:
    """Whether a value is there, as pandas' ``notna`` counts a scalar (not ``None``, not NaN).

    >>> present(0.0), present(None), present(float("nan")), present("")
    (True, False, False, True)
    """
    return not _missing(v)


_WIDER = {"B": "H", "H": "I", "I": "Q"}
_DTYPES = {"B": "uint8", "H": "uint16", "I": "uint32", "Q": "uint64"}
#: a column is coded while at most this share of its rows hold a value not seen before in it (measured from
#: :data:`_PLAIN_AFTER` rows on): past it (timings, unique to their row) it keeps a list of its values
_PLAIN_SHARE, _PLAIN_AFTER = 0.5, 4096


class Floats:
    """A plain column whose values are all floats or ``None`` (the timings): a double and a flag a row
    (9 bytes), not a pointer and a float object (32). :meth:`append` refuses any other value. With a
    :class:`~benchmark.spill.Spill`, every full chunk of :attr:`CHUNK` rows is written to it and only the rows since are
    held.

    >>> class Small(Floats): CHUNK = 2
    >>> col = Small(Spill())
    >>> [col.append(v) for v in (0.5, None, 1.5, 2.0, None)], len(col), len(col.values), len(col._sealed)
    ([True, True, True, True, True], 5, 1, 2)
    >>> col[0], col[1], col[-1], col[2:4], list(col), col.copy()[3]
    (0.5, None, None, [1.5, 2.0], [0.5, None, 1.5, 2.0, None], 2.0)
    """

    __slots__ = ("values", "none", "_sealed", "_spill", "_last")

    #: rows a chunk holds before it is written to the spill file (as :attr:`_Codes.CHUNK`)
    CHUNK = 1 << 13

    def __init__(self, spill: Spill | None = None) -> None:
        self.values = array("d")          # the rows since the last sealed chunk
        self.none = bytearray()
        self._sealed: list[tuple[Any, Any]] = []   # per sealed chunk: its doubles and flags (spilled blobs)
        self._spill = spill
        self._last: tuple[int, array, bytes] | None = None   # the sealed chunk read last by a row's index

    def append(self, v: Any) -> bool:
        if type(v) is float:
            self.values.append(v)
            self.none.append(0)
        elif v is None:
            self.values.append(0.0)
            self.none.append(1)
        else:
            return False
        if self._spill is not None and len(self.values) >= self.CHUNK:
            self._sealed.append((self._spill.put(self.values.tobytes()), self._spill.put(bytes(self.none))))
            self.values, self.none = array("d"), bytearray()
        return True

    def _chunk(self, k: int) -> tuple[Any, Any]:
        """Chunk ``k``'s doubles and flags as numpy arrays (read back from the spill file; ``k`` one past the
        sealed chunks: the open rows)."""
        import numpy as np

        if k < len(self._sealed):
            doubles, flags = self._sealed[k]
            return np.frombuffer(doubles.read(), dtype=float), np.frombuffer(flags.read(), dtype=bool)
        return (np.frombuffer(self.values, dtype=float) if len(self.values) else np.empty(0),
                np.frombuffer(self.none, dtype=bool) if len(self.none) else np.empty(0, dtype=bool))

    def arrays(self) -> tuple[Any, Any]:
        """Every row's double and whether it is ``None``, as two numpy arrays (the sealed chunks read back)."""
        import numpy as np

        if not self._sealed:
            return self._chunk(0)
        floats = np.empty(len(self), dtype=float)
        none = np.empty(len(self), dtype=bool)
        for k in range(len(self._sealed) + 1):
            doubles, flags = self._chunk(k)
            floats[k * self.CHUNK:k * self.CHUNK + len(doubles)] = doubles
            none[k * self.CHUNK:k * self.CHUNK + len(flags)] = flags
        return floats, none

    def copy(self, rows: Any = None) -> "Floats":
        """The rows (of the positions ``rows``, in their order, or every row) as a column held in memory.
        Positions in ascending order (a mask's) are read a sealed chunk at a time, so only the rows asked
        for are held at once, not every row's double as well.

        >>> class Small(Floats): CHUNK = 2
        >>> col = Small(Spill())
        >>> _ = [col.append(v) for v in (0.5, None, 1.5, 2.0, None)]
        >>> list(col.copy([0, 2, 3, 4])), list(col.copy([4, 0])), list(col.copy([-1])), list(col.copy([]))
        ([0.5, 1.5, 2.0, None], [None, 0.5], [None], [])
        """
        import numpy as np

        if rows is not None:
            rows = np.asarray(rows, dtype=np.int64)
        if rows is None or not self._sealed:   # (a column never sealed holds every row, whatever its length)
            floats, none = self.arrays()
            if rows is not None:
                floats, none = floats[rows], none[rows]
        elif len(rows) and (rows[0] < 0 or rows[-1] >= len(self) or np.any(rows[1:] < rows[:-1])):
            floats, none = self.arrays()   # not ascending (or out of range: indexing says so): read at once
            floats, none = floats[rows], none[rows]
        else:   # ascending: each chunk's rows are one stretch of them, read a chunk at a time
            floats, none = np.empty(len(rows), dtype=float), np.empty(len(rows), dtype=bool)
            starts = np.searchsorted(rows, np.arange(len(self._sealed) + 2) * self.CHUNK)
            for k in range(len(self._sealed) + 1):
                a, b = int(starts[k]), int(starts[k + 1])
                if a < b:
                    doubles, flags = self._chunk(k)
                    at = rows[a:b] - k * self.CHUNK
                    floats[a:b], none[a:b] = doubles[at], flags[at]
        out = Floats()
        if len(floats):
            out.values.frombytes(memoryview(np.ascontiguousarray(floats, dtype=float)).cast("B"))   # (no bytes copy)
            out.none = bytearray(memoryview(np.ascontiguousarray(none, dtype=np.uint8)))
        return out

    def __getitem__(self, i: Any) -> Any:
        if self._sealed:
            if isinstance(i, slice):
                floats, none = self.arrays()
                return [None if n else v for v, n in zip(floats[i].tolist(), none[i].tolist())]
            n = len(self)
            if not -n <= i < n:
                raise IndexError("row index out of range")
            k, at = divmod(i % n, self.CHUNK)
            if k == len(self._sealed):
                return None if self.none[at] else self.values[at]
            if self._last is None or self._last[0] != k:
                doubles, flags = self._sealed[k]
                self._last = (k, array("d", doubles.read()), flags.read())
            return None if self._last[2][at] else self._last[1][at]
        if isinstance(i, slice):
            return [None if none else v for v, none in zip(self.values[i], self.none[i])]
        return None if self.none[i] else self.values[i]

    def __iter__(self) -> Iterator[float | None]:
        if self._sealed:
            floats, none = self.arrays()
            return (None if n else v for v, n in zip(floats.tolist(), none.tolist()))
        return (None if none else v for v, none in zip(self.values, self.none))

    def __len__(self) -> int:
        return len(self._sealed) * self.CHUNK + len(self.values)


class _Codes:
    """A coded column's numbers, row by row, kept deflated a chunk of :attr:`CHUNK` rows at a time.

    The numbers repeat in long runs and short cycles (a question's rows one after another, the variants
    and answerers taking turns), so a sealed chunk takes a small share of its byte or two a row; the rows
    since the last chunk was sealed are an array of the column's width. A chunk keeps the width it was
    sealed with: when a number outgrows the width (:data:`_WIDER`), only the open rows are widened, and
    reading (:meth:`array`, :meth:`numpy`) widens the sealed chunks as it inflates them.

    With a :class:`~benchmark.spill.Spill`, the sealed chunks are written to it, and only where each lies is held.

    >>> class Small(_Codes): CHUNK = 4
    >>> for spill in (None, Spill()):
    ...     codes = Small(spill)
    ...     for c in [0, 1, 1, 2, 3, 300, 2]: codes.append(c)
    ...     print(len(codes), codes.typecode, len(codes._sealed), list(codes.array()), codes[5], codes[-7], codes.numpy()[3:5].tolist())
    7 H 1 [0, 1, 1, 2, 3, 300, 2] 300 0 [2, 3]
    7 H 1 [0, 1, 1, 2, 3, 300, 2] 300 0 [2, 3]
    """

    __slots__ = ("typecode", "_sealed", "tail", "_last", "_spill")

    #: rows a chunk holds before it is sealed (deflated). The open rows of every column grow an array each
    #: until the chunk is sealed: with chunks of 65 536 rows, a run of 500 diagrams (88 200 samples) started
    #: its report 5 MB larger than one whose open rows were never more than 8 192 (the arrays' growth, each
    #: made again larger as it fills, leaves the allocator's heap in pieces)
    CHUNK = 1 << 13

    def __init__(self, spill: Spill | None = None) -> None:
        self.typecode = "B"
        # per sealed chunk: its width and its deflated numbers (where they lie in the spill file, with one)
        self._sealed: list[tuple[str, Any]] = []
        self.tail = array("B")
        self._last: tuple[int, array] | None = None  # the sealed chunk read last by a row's index, inflated
        self._spill = spill

    def append(self, code: int) -> None:
        """Add a row's number (:meth:`RowStore.add` does the same inline: appends to :attr:`tail`, then
        :meth:`widen` where the number does not fit and :meth:`seal` once the chunk is full)."""
        try:
            self.tail.append(code)
        except OverflowError:
            self.widen(code)
        if len(self.tail) >= self.CHUNK:
            self.seal()

    def widen(self, code: int) -> None:
        """Add ``code``, a number the width does not hold: the open rows are made one size wider first."""
        self.typecode = _WIDER[self.typecode]
        self.tail = array(self.typecode, self.tail)
        self.tail.append(code)

    def seal(self) -> None:
        """Deflate the open rows into a sealed chunk (a full one: every chunk but the last holds :attr:`CHUNK`)."""
        self._sealed.append((self.typecode, keep(zlib.compress(self.tail, 1), self._spill)))
        self.tail = array(self.typecode)

    def _packed(self, k: int) -> tuple[str, bytes]:
        """Sealed chunk ``k``: its width and its deflated numbers."""
        typecode, packed = self._sealed[k]
        return typecode, read(packed)

    def __len__(self) -> int:
        return len(self._sealed) * self.CHUNK + len(self.tail)

    def _inflated(self, k: int) -> array:
        typecode, packed = self._packed(k)
        out = array(typecode)
        out.frombytes(zlib.decompress(packed))
        return out

    def __getitem__(self, i: int) -> int:
        n = len(self)
        if not -n <= i < n:
            raise IndexError("row index out of range")
        k, at = divmod(i % n, self.CHUNK)
        if k == len(self._sealed):
            return self.tail[at]
        if self._last is None or self._last[0] != k:
            self._last = (k, self._inflated(k))
        return self._last[1][at]

    def chunks(self) -> Iterator[array]:
        """The numbers a chunk at a time, in row order (each sealed chunk inflated when reached)."""
        for k in range(len(self._sealed)):
            yield self._inflated(k)
        yield self.tail

    def numpy(self) -> Any:
        """Every row's number, as a numpy array of the column's width (a copy)."""
        import numpy as np

        dtype = np.dtype(_DTYPES[self.typecode])
        out = np.empty(len(self), dtype=dtype)
        at = 0
        for k in range(len(self._sealed)):
            typecode, packed = self._packed(k)
            out[at:at + self.CHUNK] = np.frombuffer(zlib.decompress(packed), dtype=_DTYPES[typecode])
            at += self.CHUNK
        out[at:] = np.frombuffer(self.tail, dtype=dtype) if len(self.tail) else 0
        return out

    def array(self) -> array:
        """Every row's number, as an array of the column's width (a copy)."""
        if not self._sealed:
            return array(self.typecode, self.tail)
        return _as_array(self.numpy(), self.typecode)


def _as_array(numbers: Any, typecode: str) -> array:
    """A numpy array of value numbers as an ``array`` of ``typecode`` (the numbers' width)."""
    out = array(typecode)
    if len(numbers):
        out.frombytes(numbers.tobytes())
    return out


class Coded:
    """A coded column read as a sequence of its values: a row's value is looked up from its number when read
    (``values[codes[i]]``), so a table reading a column holds a byte or two a row (the store's numbers, inflated,
    or those of the rows it asked for), not a list's 8-byte pointer a row. The values are the store's own
    objects, as a list of the column would hold. Read-only.

    >>> col = Coded(["x", None], array("B", [1, 0, 0]))
    >>> len(col), col[0], col[-1], list(col), col[1:]
    (3, None, 'x', [None, 'x', 'x'], ['x', 'x'])
    """

    __slots__ = ("_values", "_codes")

    #: rows read at a time when iterating (a list of their numbers at a time, not of every row's)
    CHUNK = 65536

    def __init__(self, values: list[Any], codes: array) -> None:
        self._values, self._codes = values, codes

    def __len__(self) -> int:
        return len(self._codes)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self._values[c] for c in self._codes[i]]
        return self._values[self._codes[i]]

    def __iter__(self) -> Iterator[Any]:
        values, codes = self._values, self._codes
        for start in range(0, len(codes), self.CHUNK):
            yield from map(values.__getitem__, codes[start:start + self.CHUNK])

    @property
    def values(self) -> list[Any]:
        """The distinct values, by number."""
        return self._values

    @property
    def numbers(self) -> Any:
        """Each row's value number, as a numpy array sharing the sequence's memory (read-only).

        >>> Coded(["x", "y"], array("B", [1, 0, 1])).numbers.tolist()
        [1, 0, 1]
        """
        import numpy as np

        return np.frombuffer(self._codes, dtype=_DTYPES[self._codes.typecode]) if len(self._codes) else np.zeros(0, np.uint8)

    def mapped(self, f: Any) -> "Coded":
        """The sequence of ``f`` of each row's value: ``f`` of each distinct value, the numbers shared."""
        return Coded([f(v) for v in self._values], self._codes)

    def picked(self, rows: Any) -> "Coded":
        """The sequence of the rows at positions ``rows`` (integers, in their order): their numbers copied."""
        import numpy as np

        typecode = self._codes.typecode
        if not len(rows) or not len(self._codes):
            return Coded(self._values, array(typecode))
        codes = np.frombuffer(self._codes, dtype=_DTYPES[typecode])
        return Coded(self._values, _as_array(codes[np.asarray(rows, dtype=np.int64)], typecode))

    def take(self, table: Any) -> Any:
        """``table`` (a numpy array, one entry per value number) picked by each row's number: a numpy array."""
        import numpy as np

        if not len(self._codes):
            return table[:0]
        return table[np.frombuffer(self._codes, dtype=_DTYPES[self._codes.typecode])]


def _plain_column(values: list[Any], spill: Spill | None = None) -> "list[Any] | Floats":
    """``values`` as a plain column: :class:`Floats` when they are all floats or ``None`` (its full chunks
    written to ``spill``, when given), else the list.

    >>> type(_plain_column([0.5, None])).__name__, list(_plain_column([0.5, None])), _plain_column([1, 0.5])
    ('Floats', [0.5, None], [1, 0.5])
    """
    floats = Floats(spill)
    return floats if all(floats.append(v) for v in values) else values


class RowStore:
    """The report rows of a run, kept while it goes: one compact column per frame column, not a tuple (or
    a record) per sample.

    Values repeat from row to row (variant and answerer names, a question's text and gold answer under
    every variant, a handful of distinct scores): each column keeps its distinct values once and, per
    row, the number of its value in the narrowest array that holds it (one byte for a column of up to
    256 values), kept deflated a chunk of rows at a time (:class:`_Codes`: runs of a question's rows and
    cycles of variants and answerers take a small share of a byte a row), so a run ten times as large
    holds far less than ten times the memory of its records. The sealed chunks are written to an unnamed
    temporary file (:class:`~benchmark.spill.Spill`) and read back when a table reads the column: what the store holds
    in memory is each column's distinct values, where each chunk lies, and the rows since the last chunk.
    A column whose values are mostly new (timings, unique to their row) is kept as a plain column: an
    array of doubles while its values are floats or ``None`` (written to the file a chunk at a time too),
    else a list. Equal
    values of one column become one object in the frame: the frame's values are read, never changed
    in place.
    :meth:`to_frame` moves the columns into the samples frame one at a time and empties the store, so
    the rows are never held twice while the report is made.
    """

    def __init__(self, plain: tuple[int, ...] = ()) -> None:
        """``plain``: the numbers of the columns kept plain from the first row (measurements that seldom
        repeat, such as :data:`SECONDS_COLUMNS`: numbering their values would hold each one in memory)."""
        self._plain_from_start = tuple(plain)
        self._n = 0
        self._width = 0
        self._plain: list[list[Any] | Floats | None] = []   # per column: its values row by row, or None while coded
        self._codes: list[_Codes | None] = []         # per coded column: the number of each row's value
        self._values: list[list[Any]] = []            # per coded column: its distinct values by number
        self._index: list[dict[Any, int]] = []        # per coded column: a value's key -> its number
        self._spill = Spill("diagqa-rows-")           # where the sealed chunks of every column go

    @classmethod
    def for_samples(cls) -> "RowStore":
        """A store for rows of :data:`FRAME_COLUMNS` (:func:`frame_row`), its :data:`SECONDS_COLUMNS` plain
        from the first row."""
        return cls(tuple(FRAME_COLUMNS.index(c) for c in SECONDS_COLUMNS))

    def add(self, row: tuple[Any, ...]) -> None:
        if not self._width:
            self._width = len(row)
            self._plain = [Floats(self._spill) if j in self._plain_from_start else None for j in range(len(row))]
            self._codes = [None if j in self._plain_from_start else _Codes(self._spill) for j in range(len(row))]
            self._values = [[] for _ in row]
            self._index = [{} for _ in row]
        elif len(row) != self._width:
            raise ValueError(f"a report row of {len(row)} values among rows of {self._width}")
        self._n += 1
        plain, codes, values, index = self._plain, self._codes, self._values, self._index
        for j, v in enumerate(row):
            col = plain[j]
            if col is not None:
                if type(col) is list:
                    col.append(v)
                elif not col.append(v):   # the first value of a float column that is no float: a list from here
                    plain[j] = [*col, v]
                continue
            key = _key(v)
            code = index[j].get(key) if key is not _UNSHARED else None
            if code is None:
                vals = values[j]
                code = len(vals)
                vals.append(v)
                if key is not _UNSHARED:
                    index[j][key] = code
                if code >= _PLAIN_AFTER and code > _PLAIN_SHARE * self._n:
                    self._to_plain(j)
                    continue
            c = codes[j]
            try:
                c.tail.append(code)  # type: ignore[union-attr]
            except OverflowError:    # more values than the width counts
                c.widen(code)        # type: ignore[union-attr]
        if not self._n % _Codes.CHUNK:   # every coded column holds every row: a chunk of each is full
            for c in codes:
                if c is not None:
                    c.seal()

    def _to_plain(self, j: int) -> None:
        """Column ``j`` (whose last value was just added) as a plain list of its values."""
        vals, codes = self._values[j], self._codes[j]
        assert codes is not None
        col = [vals[c] for chunk in codes.chunks() for c in chunk]
        col.append(vals[-1])
        self._plain[j], self._codes[j], self._values[j], self._index[j] = _plain_column(col, self._spill), None, [], {}

    def _column(self, j: int) -> Iterator[Any]:
        col = self._plain[j]
        if col is not None:
            return iter(col)
        vals, codes = self._values[j], self._codes[j]
        assert codes is not None
        return (vals[c] for chunk in codes.chunks() for c in chunk)

    def __len__(self) -> int:
        return self._n

    @property
    def width(self) -> int:
        """Values per row (0 before the first row)."""
        return self._width

    def _code_array(self, j: int) -> Any:
        """The numbers of coded column ``j``'s values, row by row, as a numpy array (inflated: a copy)."""
        codes = self._codes[j]
        assert codes is not None
        return codes.numpy()

    def column(self, j: int, rows: Any = None) -> Any:
        """Column ``j`` as a numpy array of objects (as :meth:`to_frame` makes it), of every row or of the
        row positions ``rows`` (an integer array) in their order; the store is left as it is."""
        import numpy as np

        col = self._plain[j]
        if col is None:
            vals = np.fromiter(self._values[j], dtype=object, count=len(self._values[j]))
            picked = self._code_array(j)
            return vals[picked if rows is None else picked[rows]]
        if type(col) is Floats:
            floats, none = col.arrays()
            if rows is not None:
                floats, none = floats[rows], none[rows]
            out = floats.astype(object)
            out[none] = None
            return out
        # fromiter keeps each value as one object (a list-valued answer is not unpacked)
        if rows is None:
            return np.fromiter(col, dtype=object, count=len(col))
        return np.fromiter((col[i] for i in rows), dtype=object, count=len(rows))

    def sequence(self, j: int, rows: Any = None) -> Any:
        """Column ``j`` as a read-only sequence of its values (``len``, indexing, iterating), of every row or of
        the row positions ``rows`` (an integer array) in their order, the same values as :meth:`column`
        gives: a coded column as :class:`Coded` (the store's numbers inflated, or those of ``rows`` picked,
        a byte or two a row, held while the sequence is), a column of floats as the store's :class:`Floats` itself
        (its sealed chunks read back as asked for: picking a group's rows from it reads those rows a chunk at a
        time) or a copy of those of ``rows``; the store is left as it is and must not change while the sequence
        is read."""
        col = self._plain[j]
        if col is None:
            codes = self._codes[j]
            assert codes is not None
            if rows is None:
                return Coded(self._values[j], codes.array())
            return Coded(self._values[j], _as_array(codes.numpy()[rows], codes.typecode))
        if type(col) is Floats:
            return col if rows is None else col.copy(rows)
        if rows is None:
            return col
        return [col[i] for i in rows]

    def present(self, j: int) -> Any:
        """Whether each row's value of column ``j`` is measured (neither ``None`` nor NaN), as a numpy bool array."""
        import numpy as np

        col = self._plain[j]
        if col is None:
            known = np.fromiter((not _missing(v) for v in self._values[j]), dtype=bool, count=len(self._values[j]))
            return known[self._code_array(j)]
        return np.fromiter((not _missing(v) for v in col), dtype=bool, count=len(col))

    def take(self) -> "RowStore":
        """A store holding these rows, this one left empty (as :meth:`to_frame` leaves it): whoever made the
        rows does not keep them alive once the report holds them. The store taken is for reading: it has
        no index of values, so a row added to it would give its values new numbers."""
        out = RowStore(self._plain_from_start)
        out._n, out._width, out._plain, out._codes, out._values, out._index, out._spill = (
            self._n, self._width, self._plain, self._codes, self._values, [{} for _ in self._index], self._spill)
        self.__init__(self._plain_from_start)  # type: ignore[misc]
        return out

    def __getitem__(self, i: int) -> tuple[Any, ...]:
        if not -self._n <= i < self._n:
            raise IndexError("report row index out of range")
        return tuple(col[i] if col is not None else self._values[j][self._codes[j][i]]  # type: ignore[index]
                     for j, col in enumerate(self._plain))

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return zip(*(self._column(j) for j in range(self._width))) if self._width else iter(())

    def to_frame(self) -> Any:
        """The samples frame (as :func:`benchmark.report.aggregate.frame` makes it, :data:`FRAME_COLUMNS`,
        every column of dtype object) of the rows; the store is left empty."""
        import numpy as np
        import pandas as pd

        n, width = self._n, self._width or len(FRAME_COLUMNS)
        if width != len(FRAME_COLUMNS):
            raise ValueError(f"report rows of {width} values, the samples frame has {len(FRAME_COLUMNS)} columns")
        block = np.empty((width, n), dtype=object)
        for j in range(self._width):
            block[j] = self.column(j)
            self._plain[j], self._codes[j], self._values[j], self._index[j] = [], None, [], {}  # each column let go as it is moved
        self._spill.close()
        self.__init__()  # type: ignore[misc]
        return pd.DataFrame(block.T, columns=list(FRAME_COLUMNS), dtype=object, copy=False)


def reads_samples_file(records: Any) -> bool:
    """Whether a report's ``records`` are only its rows (tuples, a :class:`RowStore`, or the samples frame
    made from them): the parts of the report that need whole records then read ``samples.jsonl``.

    >>> reads_samples_file([("s", "q")]), reads_samples_file([{"sample_id": "s"}]), reads_samples_file(RowStore())
    (True, False, True)
    """
    import pandas as pd

    from benchmark.report.columns import SampleColumns

    if isinstance(records, (RowStore, pd.DataFrame, SampleColumns)):
        return True
    return bool(records) and isinstance(records[0], tuple)
