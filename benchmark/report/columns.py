"""The samples frame of a run kept as its report rows' coded columns, made into pandas a few columns at a time.

The report's tables read some forty columns of every sample, but each table only a handful, most of them for
the scored samples only. A frame of every column (:meth:`benchmark.report.rows.RowStore.to_frame`) costs a
pointer per value, about 360 bytes a sample, however few distinct values a column has: at 100 times the
bundled data that frame was the largest thing the run held. :class:`SampleColumns` keeps the
:class:`~benchmark.report.rows.RowStore` instead (a byte or two per value) and makes, when a table asks, a
pandas object of the columns and rows asked for, with the same values, ``None`` kept and every column of
dtype object, as the whole frame would give. Only what the report's tables do with the samples frame is
offered: ``len``, ``in``, ``columns``, ``frame[name]``, ``frame[[names]]``, ``frame[mask]``,
``frame.loc[mask, names]``; the table functions take a pandas frame as well.
"""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np
import pandas as pd

from benchmark.report.rows import FRAME_COLUMNS, RowStore


class SampleColumns:
    """The samples frame (:data:`FRAME_COLUMNS`) of a :class:`RowStore`'s rows, read a few columns at a time.

    >>> store = RowStore()
    >>> for i, g in enumerate(["grounded", None, "lucky_guess"]):
    ...     row = dict.fromkeys(FRAME_COLUMNS); row.update(question_id=f"q{i}", guess_class=g, srr=i / 2)
    ...     store.add(tuple(row.values()))
    >>> df = SampleColumns(store)
    >>> len(df), "srr" in df, df["srr"].tolist(), df[df["guess_class"] == "lucky_guess"]["question_id"].tolist()
    (3, True, [0.0, 0.5, 1.0], ['q2'])
    >>> df.loc[df["guess_class"].notna(), ["question_id", "srr"]].to_dict("list")
    {'question_id': ['q0', 'q2'], 'srr': [0.0, 1.0]}
    """

    def __init__(self, store: RowStore) -> None:
        if store.width not in (0, len(FRAME_COLUMNS)):
            raise ValueError(f"report rows of {store.width} values, the samples frame has {len(FRAME_COLUMNS)} columns")
        self._store = store
        self._at = {name: j for j, name in enumerate(FRAME_COLUMNS)}
        self.columns = pd.Index(FRAME_COLUMNS, dtype=object)

    def __len__(self) -> int:
        return len(self._store)

    def __contains__(self, name: object) -> bool:
        return name in self._at

    def _values(self, name: str, rows: np.ndarray | None = None) -> np.ndarray:
        if name not in self._at:
            raise KeyError(name)
        if not len(self._store):
            return np.empty(0 if rows is None else len(rows), dtype=object)
        return self._store.column(self._at[name], rows)

    def _frame(self, names: Iterable[str], rows: np.ndarray | None = None) -> pd.DataFrame:
        names = list(names)
        index = pd.RangeIndex(len(self)) if rows is None else pd.Index(rows, dtype="int64")
        return pd.DataFrame({n: pd.Series(self._values(n, rows), index=index, dtype=object, copy=False) for n in names},
                            index=index, columns=names)

    def _rows(self, mask: Any) -> np.ndarray:
        """The positions a boolean mask (a Series or array of one value per sample) keeps."""
        m = np.asarray(mask, dtype=bool)
        if m.shape != (len(self),):
            raise ValueError(f"a mask of {m.shape} values for a frame of {len(self)} samples")
        return np.flatnonzero(m)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return pd.Series(self._values(key), index=pd.RangeIndex(len(self)), dtype=object, name=key, copy=False)
        if isinstance(key, list) and all(isinstance(k, str) for k in key):
            return self._frame(key)
        return self._frame(FRAME_COLUMNS, self._rows(key))

    @property
    def loc(self) -> "_Loc":
        return _Loc(self)

    def lists(self, names: Iterable[str], only_scored: bool = False) -> dict[str, list[Any]]:
        """Columns ``names`` as read-only sequences of their values (``None`` kept; indexing, iterating,
        ``len``: :meth:`~benchmark.report.rows.RowStore.sequence`, a byte or two a row where a list holds an
        8-byte pointer), of the scored samples only when asked (a guess class or a ``correct`` value), each
        made when it is first read (:class:`_Lists`): a table that asks for more columns than it reads never
        holds the others."""
        rows = None
        if only_scored and len(self):
            scored = self._scored_mask()
            if not scored.all():   # (every sample scored, as in most runs: the columns as they are, none picked)
                rows = np.flatnonzero(scored)
        return _Lists(lambda n: self._sequence(n, rows), names)

    def _sequence(self, name: str, rows: np.ndarray | None = None) -> Any:
        if name not in self._at:
            raise KeyError(name)
        if not len(self._store):
            return []
        return self._store.sequence(self._at[name], rows)

    def _scored_mask(self) -> np.ndarray:
        """Whether each sample has metrics (no stage error before scoring), as a numpy bool array."""
        return self._store.present(self._at["guess_class"]) | self._store.present(self._at["correct"])

    def scored_rows(self) -> np.ndarray:
        """The positions of the samples that have metrics (no stage error before scoring)."""
        if not len(self):
            return np.empty(0, dtype=np.int64)
        return np.flatnonzero(self._scored_mask())

    def scored(self, columns: Iterable[str]) -> pd.DataFrame:
        """:func:`benchmark.report.aggregate.scored` of this frame: ``columns`` (and the two the test reads)
        of the scored samples, indexed by their positions."""
        return self._frame(dict.fromkeys([*columns, "guess_class", "correct"]), self.scored_rows())


class _Lists(dict):
    """Column name -> its values (a list or a read-only sequence), each made by ``make(name)`` when first read
    and kept; a name not among ``names`` is a ``KeyError``, as in the mapping of every column made at once. Iterating or
    counting it sees only the columns read so far (the tables only look names up).

    >>> made = []
    >>> cols = _Lists(lambda n: made.append(n) or [n] * 2, ["a", "b"])
    >>> cols["a"], cols["a"], made, "b" in cols
    (['a', 'a'], ['a', 'a'], ['a'], False)
    >>> cols["c"]
    Traceback (most recent call last):
    KeyError: 'c'
    """

    def __init__(self, make: Any, names: Iterable[str]) -> None:
        super().__init__()
        self._make = make
        self._names = frozenset(names)

    def __missing__(self, name: str) -> list[Any]:
        if name not in self._names:
            raise KeyError(name)
        values = self[name] = self._make(name)
        return values


class _Loc:
    """``frame.loc[mask, name]`` (a Series) and ``frame.loc[mask, [names]]`` (a frame)."""

    def __init__(self, frame: SampleColumns) -> None:
        self._frame = frame

    def __getitem__(self, key: tuple[Any, Any]) -> Any:
        mask, names = key
        rows = self._frame._rows(mask)
        if isinstance(names, str):
            return self._frame._frame([names], rows)[names]
        return self._frame._frame(names, rows)
