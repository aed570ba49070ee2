"""The data behind report.html's sample explorer: every sample as compact columns, read generically.

A sample's fields are taken as the record holds them, so a key the scorer adds later shows up in the
page without a change here: every scalar of ``metrics`` under its own name (lists and mappings as
short JSON text), every scalar of ``answer`` as ``answer.<key>`` (one level of a mapping such as
``usage`` as ``answer.usage.<key>``), the stage error as ``stage_error``. Questions (with the gold
answer written with the diagram's node labels, as answers are) and contexts are stored once and
referred to by index; a context is the subgraph and text the answerer received (which may be less
than the selector retrieved: an answerer that reads no context receives an empty one). Diagrams
are d2's SVG with the map from graph elements to SVG elements (:mod:`benchmark.report.diagrams`),
for the diagram of every sample whose class is drawn (:data:`DRAWN`).

>>> gold_text(["start", "found"], "path", {"start": "Start", "found": "Return mid"})
'Start → Return mid'
>>> gold_text(True, "reachable", {}), gold_text("go_left", "decision_outcome", {"go_left": "Search left half"})
('yes', 'Search left half')
"""
from __future__ import annotations

import hashlib
import json
import re
import tempfile
import weakref
import zlib
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from benchmark.records import dumps_line
from benchmark.report.html import json_bytes
from benchmark.spill import pack, unpack

#: guess classes whose samples get their diagram drawn with certificate, retrieval and misses
DRAWN = ("lucky_guess", "misread", "extraction_error")
#: the explorer's columns, in this order, where the run's samples have them (every field is in the drill-down)
GRID = ("variant", "answerer", "question", "guess_class", "correct", "abstained", "error", "stage_error", "srr",
        "node_srr", "precision", "f1", "sufficient", "faithfulness", "answer")
#: record fields that are not shown (bulky, or already shown another way)
_SKIP_ANSWER = {"raw", "answerer", "explanation", "evidence"}


def gold_text(value: Any, qtype: str, labels: dict[str, str]) -> str:
    """A gold answer as a reader writes it: yes/no, node ids as their labels, paths with arrows."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        sep = " → " if "path" in str(qtype) else ", "
        return sep.join(gold_text(v, qtype, labels) for v in value)
    if isinstance(value, str):
        return labels.get(value, value)
    return "–" if value is None else str(value)


def _answer_text(raw: Any) -> Any:
    if isinstance(raw, (list, tuple)):
        return ", ".join(str(v) for v in raw)
    if isinstance(raw, dict):
        return json.dumps(raw, ensure_ascii=False)
    return raw


def _cell(value: Any) -> Any:
    """A field value as the page stores it: floats to 4 decimals, lists and mappings as short JSON."""
    if isinstance(value, float):
        return None if value != value else round(value, 4)
    if isinstance(value, (list, tuple, dict)):
        if not value:
            return "[]" if isinstance(value, (list, tuple)) else "{}"
        text = dumps_line(value)
        return text if len(text) <= 400 else text[:399] + "…"
    return value


def sample_fields(rec: dict[str, Any]) -> dict[str, Any]:
    """The per-sample fields of one record (see the module's docstring), besides question and context."""
    out: dict[str, Any] = {"variant": rec.get("variant"), "answerer": rec.get("answerer"),
                           "question": rec.get("question_id"), "sample_id": rec.get("sample_id")}
    answer = rec.get("answer") or {}
    out["answer"] = _cell(_answer_text(answer.get("raw")))
    out["explanation"] = answer.get("explanation")
    for key, value in (rec.get("metrics") or {}).items():
        if key not in out:
            out[key] = _cell(value)
    for key, value in answer.items():
        if key in _SKIP_ANSWER:
            continue
        if isinstance(value, dict) and key != "meta":
            for sub, v in value.items():
                out[f"answer.{key}.{sub}"] = _cell(v)
        elif isinstance(value, dict):  # meta: answerer-specific scalars
            for sub, v in value.items():
                if not isinstance(v, (dict, list)):
                    out[f"answer.{key}.{sub}"] = _cell(v)
        else:
            out[f"answer.{key}"] = _cell(value)
    err = rec.get("error")
    out["stage_error"] = f"{err.get('stage')}: {err.get('message')}" if err else None
    for key in ("finder", "source", "selector", "found_diagram", "finder_rank"):
        out[key] = rec.get(key)
    return out


#: rows of the explorer's columns held in memory before they are written out
COLUMN_CHUNK = 4096


class _Columns:
    """The samples' fields as one column per field, filled row by row: a field first met in a later
    sample has ``None`` for the samples before it. Every ``chunk`` rows the columns are written to a
    temporary file each (their JSON), so a run ten times as large holds no more of them in memory;
    :meth:`columns` gives them as :class:`Column` values. Equal strings and floats of the rows held
    are kept as one object (a handful of variant names, classes and scores repeat over every sample).

    >>> c = _Columns(chunk=2); c.add({"a": 1, "b": "x"}); c.add({"b": "x", "c": 0.5}); c.add({"c": 1.5})
    >>> {k: list(v) for k, v in c.columns().items()}
    {'a': [1, None, None], 'b': ['x', 'x', None], 'c': [None, 0.5, 1.5]}
    """

    def __init__(self, chunk: int | None = None) -> None:
        self.data: dict[str, list[Any]] = {}   # the rows not written yet, per field
        self.n = 0
        self._pool: dict[Any, Any] = {}
        self._files: dict[str, Any] = {}
        self._written = 0
        self._chunk = chunk or COLUMN_CHUNK

    def add(self, fields: dict[str, Any]) -> None:
        pool, data = self._pool, self.data
        for key, value in fields.items():
            col = data.get(key)
            if col is None:
                col = data[key] = [None] * (self.n - self._written)
                if self._written:
                    self._file(key).write(json_bytes([None] * self._written)[1:-1])
            if type(value) is str or type(value) is float:
                value = pool.setdefault(value, value)
            col.append(value)
        self.n += 1
        if len(fields) < len(data):   # (each field of the row went to its own column: the others get None)
            for col in data.values():
                if len(col) < self.n - self._written:
                    col.append(None)
        if self.n - self._written >= self._chunk:
            self._flush()

    def _file(self, key: str) -> Any:
        f = self._files.get(key)
        if f is None:
            f = self._files[key] = tempfile.TemporaryFile()
        return f

    def _flush(self) -> None:
        for key, col in self.data.items():
            f = self._file(key)
            f.write((b"," if f.tell() else b"") + json_bytes(col)[1:-1])
            col.clear()
        self._written = self.n
        self._pool.clear()

    def columns(self) -> dict[str, "Column"]:
        """Every field's column, in the order the fields were first met."""
        return {key: Column(self._files.get(key), col) for key, col in self.data.items()}


class Column:
    """One field of the sample explorer: the values written to ``file`` (their JSON, without the
    brackets), then the ``tail`` still in memory. Written into the page's data as a JSON list
    (:meth:`json_pieces`) without being read whole; iterating reads it back (the tests look into it).
    """

    def __init__(self, file: Any, tail: list[Any]) -> None:
        self._file, self._tail = file, tail

    def json_pieces(self) -> Iterator[bytes]:
        """The values as one compact JSON list, a block at a time."""
        yield b"["
        wrote = False
        if self._file is not None:
            self._file.flush()
            self._file.seek(0)
            for block in iter(lambda: self._file.read(1 << 20), b""):
                wrote = True
                yield block
            self._file.seek(0, 2)
        if self._tail:
            yield (b"," if wrote else b"") + json_bytes(self._tail)[1:-1]
        yield b"]"

    def _values(self) -> list[Any]:
        if self._file is None:
            return list(self._tail)
        return json.loads(b"".join(self.json_pieces()))

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values())

    def __len__(self) -> int:
        return len(self._values())

    def __getitem__(self, i: int) -> Any:
        return self._values()[i]

    def __eq__(self, other: object) -> bool:
        return self._values() == (list(other) if isinstance(other, Column) else other)

    __hash__ = None  # type: ignore[assignment]


def _records(run_dir: Path, records: list[Any] | None) -> Iterator[dict[str, Any]]:
    """Records as dicts: the given ones, or (when given None or frame rows) the run's samples.jsonl read
    line by line."""
    if records is None or (records and isinstance(records[0], tuple)):
        from benchmark.records import loads_line
        from benchmark.rundir import scan_samples
        from benchmark.runner import SAMPLES

        for _, rec in scan_samples(run_dir / SAMPLES, loads_line):
            yield rec
        return
    for rec in records:
        yield rec if isinstance(rec, dict) else vars(rec)


_SPACE = re.compile(r"[ \t\n\r]*")


#: characters of graphs.json read at a time (:func:`iter_graphs`)
GRAPHS_CHUNK = 1 << 20


def iter_graphs(path: Path) -> Iterator[tuple[str, Any]]:
    """The ``(diagram id, graph)`` pairs of a ``graphs.json`` (one JSON object), read one at a time from a
    chunk of the file at a time (:data:`GRAPHS_CHUNK` characters), so neither the file's text nor the graphs
    of every diagram are ever held at once (a run ten times as large has ten times as many).
    Malformed JSON raises :class:`json.JSONDecodeError`, as :func:`json.loads` would (its position counted
    in the chunks held).

    >>> import tempfile; f = Path(tempfile.mkdtemp()) / "g.json"; _ = f.write_text('{"a": {"nodes": []}, "b" :{}}')
    >>> list(iter_graphs(f))
    [('a', {'nodes': []}), ('b', {})]
    """
    decode = json.JSONDecoder().raw_decode
    with open(path, encoding="utf-8") as fh:
        text, i, eof = "", 0, False   # text[i:]: what is read and not parsed yet

        def more() -> bool:
            """Read the next chunk (the parsed part let go); False at the end of the file. A chunk is at least
            as long as what is waiting to be parsed, so a value longer than a chunk is tried again after the
            text read has doubled, not after every chunk (a few tries, not one per chunk of it)."""
            nonlocal text, i, eof
            chunk = "" if eof else fh.read(max(GRAPHS_CHUNK, len(text) - i))
            eof = not chunk
            if chunk:
                text, i = text[i:] + chunk, 0
            return bool(chunk)

        def space() -> None:
            nonlocal i
            i = _SPACE.match(text, i).end()
            while i == len(text) and more():
                i = _SPACE.match(text, i).end()

        def expect(chars: str) -> None:
            space()
            if text[i:i + 1] not in tuple(chars):
                raise json.JSONDecodeError(f"expected {' or '.join(map(repr, chars))}", text, i)

        def value() -> Any:
            """The JSON value at ``i``, reading on while it is cut off by the chunk's end (a value that ends
            at the end of the text read may go on, as a number does)."""
            nonlocal i
            while True:
                try:
                    v, end = decode(text, i)
                except json.JSONDecodeError:
                    if not more():
                        raise
                    continue
                if end < len(text) or not more():
                    i = end
                    return v

        expect("{")
        i += 1
        space()
        if text[i:i + 1] != "}":   # a diagram at least
            while True:
                expect('"')
                key = value()
                expect(":")
                i += 1
                space()
                graph = value()
                yield key, graph
                expect(",}")
                if text[i] == "}":
                    break
                i += 1
        i += 1
        space()
        if i != len(text):
            raise json.JSONDecodeError("extra data", text, i)


def _run_graphs(run_dir: Path) -> Iterator[tuple[str, Any]]:
    """The run's gold graphs (its ``graphs.json``) one at a time; none when the run has no graphs."""
    from benchmark.runner import GRAPHS

    path = Path(run_dir) / GRAPHS
    return iter_graphs(path) if path.exists() else iter(())


def _graphs(run_dir: Path, only: Iterable[str] | None = None) -> dict[str, Any]:
    """The run's gold graphs by diagram id (of the diagrams in ``only`` when given); empty without graphs.json."""
    keep = None if only is None else set(only)
    return {did: g for did, g in _run_graphs(run_dir) if keep is None or did in keep}


def _labels(graph: dict[str, Any]) -> dict[str, str]:
    return {n["id"]: n.get("label") or n["id"] for n in graph.get("nodes", [])}


class _ByDiagram:
    """A mapping kept per diagram: the diagram looked up last as a dict, every other one pickled and deflated (a
    run's samples come a diagram at a time; a run ten times as large has ten times as many diagrams' entries,
    a few bytes each sealed where a dict holds about a hundred). Exact in any order: a diagram met again is
    made a dict again.

    >>> m = _ByDiagram(); m.get("d1", "a") is None
    True
    >>> m.put("d1", "a", 0); m.put("d2", "b", 1); m.put("d1", "c", 2)
    >>> m.get("d1", "a"), m.get("d2", "b"), m.get("d2", "a"), m.get("d1", "c"), sorted(m._sealed)
    (0, 1, None, 2, ['d2'])
    >>> m.of("d2"), m.of("d3")
    ({'b': 1}, {})
    """

    def __init__(self) -> None:
        self._did: Any = None
        self._open: dict[Any, Any] = {}
        self._sealed: dict[Any, bytes] = {}

    def _of(self, did: Any) -> dict[Any, Any]:
        if did != self._did:
            if self._open:
                self._sealed[self._did] = pack(self._open)
            packed = self._sealed.pop(did, None)
            self._open = unpack(packed) if packed is not None else {}
            self._did = did
        return self._open

    def of(self, did: Any) -> dict[Any, Any]:
        """Diagram ``did``'s mapping (empty for a diagram not met), to read or fill."""
        return self._of(did)

    def get(self, did: Any, key: Any) -> Any:
        return self._of(did).get(key)

    def put(self, did: Any, key: Any, value: Any) -> None:
        self._of(did)[key] = value


def node_labels(run_dir: Path, only: Iterable[str] | None = None) -> dict[str, dict[str, str]]:
    """Per diagram of the run (its ``graphs.json``; of the diagrams in ``only`` when given), node id -> label;
    empty when the run has no graphs."""
    keep = None if only is None else set(only)
    return {did: _labels(g) for did, g in _run_graphs(run_dir) if keep is None or did in keep}


def _as_sets(sub: dict[str, Any] | None) -> tuple[frozenset[str], frozenset[str]]:
    sub = sub or {}
    return frozenset(map(str, sub.get("nodes") or [])), frozenset(dumps_line(e) for e in sub.get("edges") or [])


def _mapped(sub: dict[str, Any] | None, diagram: "DrawnMap | None") -> dict[str, Any]:
    """A subgraph as indices into the drawn diagram: ``n`` node ids drawn, ``e`` edge indices, ``u`` what
    the diagram has no element for (as text)."""
    from benchmark.report.diagrams import match_edge

    sub = sub or {}
    nodes, edges, unmapped = [], [], []
    for e in sub.get("edges", []):
        i = match_edge(e, diagram.ends, diagram.pairs) if diagram else None
        if i is None:
            unmapped.append(f"{e[0]} {'->' if (len(e) < 4 or e[3]) else '--'} {e[1]}"
                            + (f" ({e[2]})" if len(e) > 2 and isinstance(e[2], str) and e[2] else ""))
        else:
            edges.append(i)
    for n in sub.get("nodes", []):
        if diagram and n in diagram.node_ids:
            nodes.append(n)
        elif not any(n in (e[0], e[1]) for e in sub.get("edges", [])):
            unmapped.append(str(n))
    return {"n": sorted(set(nodes)), "e": sorted(set(edges)), "u": unmapped}


def explorer_data(run_dir: Path, records: list[Any] | None, card: dict[str, Any],
                  render: bool = True, draw: set[str] | None = None,
                  drawings: Drawings | None = None, each: Callable[[dict[str, Any]], None] | None = None
                  ) -> dict[str, Any]:
    """Everything the sample explorer shows, as one JSON-ready value (see the module's docstring).

    With ``render`` the diagrams of drawn samples are rendered (or read from the cache); a diagram
    whose D2 file is gone, or that d2 cannot draw, is listed in ``missing_diagrams`` with the reason.
    ``draw`` (the diagrams of the samples whose class is drawn) saves reading the records twice to find
    them; ``drawings`` are those diagrams' drawings already started (:class:`Drawings` of ``draw``: the
    report starts them once its tables are made, before its plots), else they are made here, one per
    core at a time. The contexts are a :class:`Spool`, kept on disk. ``each`` is given every record as it is
    read, in order (the report's decisions are written in the same pass over ``samples.jsonl``).
    """
    run_dir = Path(run_dir)
    if draw is None:
        draw = {rec["diagram_id"] for rec in _records(run_dir, records)
                if (rec.get("metrics") or {}).get("guess_class") in DRAWN}
    # one pass over graphs.json: every diagram's labels, and the graphs of the drawn diagrams only (mapped
    # onto their drawings), deflated until then: nearly every diagram of a run is drawn
    labels, graphs = _ByDiagram(), {}   # (diagram id -> node id -> label)
    for did, g in _run_graphs(run_dir):
        labels.of(did).update(_labels(g))
        if did in draw:
            graphs[did] = zlib.compress(json_bytes(g), 1)
    # the diagrams first, so each question's and context's map is made as it is met and the contexts
    # (one per distinct context text and subgraph: ten times as many in a run ten times as large) go
    # to a spool file, not into memory
    if drawings is None:
        import os

        with Drawings(card, draw, render, workers=os.cpu_count() or 1) as drawings:
            diagrams, missing = _diagrams(drawings, graphs)
    else:
        diagrams, missing = _diagrams(drawings, graphs)
    graphs.clear()   # (mapped onto their drawings)
    # the questions, the contexts and each sample's references to them grow with the run: they are kept on
    # disk as they are made, like the samples' columns
    questions = Spool()
    q_index = _ByDiagram()   # (a question is its diagram's, and a context's key holds its diagram)
    contexts = Spool()
    c_index = _ByDiagram()
    columns = _Columns()
    refs = _Columns()   # per sample: "q" its question's index, "c" its context's (None: no context)
    for rec in _records(run_dir, records):
        if each is not None:
            each(rec)
        q = rec["question"]
        qid, did = rec["question_id"], rec["diagram_id"]
        qref = q_index.get(did, qid)
        if qref is None:
            qref = len(questions)
            q_index.put(did, qid, qref)
            questions.append({"id": qid, "text": q.get("text"), "type": q.get("type"), "diagram": did,
                              "gold": _cell(q.get("answer")),
                              "gold_text": gold_text(q.get("answer"), q.get("type"), labels.of(did)),
                              "counter_prior": bool(q.get("counter_prior")), "twin_of": q.get("twin_of"),
                              "where": f"{Path(q['file']).name}:{q['line']}" if q.get("file") else None,
                              "gold_map": _mapped(q.get("certificate") or {}, diagrams.get(did))})
        ctx = rec.get("context")
        cref = None
        retrieved = rec.get("retrieved")
        if ctx is not None or retrieved is not None:
            found = rec.get("found_diagram")
            ckey = hashlib.blake2b(dumps_line([did, found, (ctx or {}).get("text"), retrieved]).encode("utf-8"),
                                   digest_size=20).digest()
            cref = c_index.get(did, ckey)
            if cref is None:
                cref = len(contexts)
                c_index.put(did, ckey, cref)
                received = {"nodes": ctx.get("nodes") or [], "edges": ctx.get("edges") or []} if ctx else None
                on_diagram = found in (None, did)
                c = {"text": (ctx or {}).get("text"), "found": found,
                     "map": _mapped(received, diagrams.get(did) if on_diagram else None),
                     "other_diagram": None if on_diagram else found}
                if retrieved is not None and _as_sets(retrieved) != _as_sets(received):
                    # the answerer received less than the selector retrieved (e.g. an answerer that reads no context)
                    c["retrieved"] = {"nodes": len(retrieved.get("nodes") or []),
                                      "edges": len(retrieved.get("edges") or [])}
                contexts.append(c)
        columns.add(sample_fields(rec))
        refs.add({"q": qref, "c": cref})
    fields = columns.columns()
    by_sample = refs.columns()
    return {
        "fields": list(fields),
        "grid": [g for g in GRID if g in fields],
        "columns": fields,
        "q": by_sample.get("q", Column(None, [])),
        "c": by_sample.get("c", Column(None, [])),
        "questions": questions,
        "contexts": contexts,
        "diagrams": diagrams,
        "missing_diagrams": missing,
        "drawn": list(DRAWN),
    }


class Spool:
    """A list of JSON values kept in a temporary file, one compact line each: appended one at a time,
    written into the page's data as a JSON list (:meth:`json_pieces`) without being held; indexing and
    iterating read them back (the tests look into a report's contexts).

    >>> s = Spool(); s.append({"a": 1}); s.append(None); len(s), s[0], list(s)
    (2, {'a': 1}, [{'a': 1}, None])
    >>> b"".join(s.json_pieces())
    b'[{"a":1},null]'
    """

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()
        self._n = 0

    def append(self, value: Any) -> None:
        self._file.write(json_bytes(value) + b"\n")
        self._n += 1

    def __len__(self) -> int:
        return self._n

    def _lines(self) -> Iterator[bytes]:
        self._file.flush()
        self._file.seek(0)
        for line in self._file:
            yield line.rstrip(b"\n")
        self._file.seek(0, 2)   # appending goes on at the end

    def __iter__(self) -> Iterator[Any]:
        for line in self._lines():
            yield json.loads(line)

    def __getitem__(self, i: int) -> Any:
        return list(self)[i]

    def json_pieces(self) -> Iterator[bytes]:
        """The values as one compact JSON list, a line at a time."""
        yield b"["
        for i, line in enumerate(self._lines()):
            yield (b"," if i else b"") + line
        yield b"]"


class DrawnMap:
    """A drawn diagram's map (:func:`benchmark.report.diagrams.diagram_map`: its SVG, ``nodes`` and ``edges``)
    kept in a temporary file shared with others as the JSON the page's data holds (:meth:`json_pieces`),
    with in memory only what mapping a subgraph onto it reads: ``node_ids`` and ``ends`` (each edge's
    source, target, label and direction), deflated. A run ten times as large draws ten times as many diagrams;
    ``map["nodes"]`` reads a part back.

    >>> f = tempfile.TemporaryFile()
    >>> m = DrawnMap(f, {"svg": "<svg/>", "nodes": {"a": "YQ=="}, "edges": [["a", "b", "", True, None]]})
    >>> m.node_ids, m.ends, m["nodes"], b"".join(m.json_pieces())
    (frozenset({'a'}), [('a', 'b', '', True)], {'a': 'YQ=='}, b'{"svg":"<svg/>","nodes":{"a":"YQ=="},"edges":[["a","b","",true,null]]}')
    """

    #: the map whose node ids and ends were read last (it keeps them made; see :meth:`_read`)
    _last: "weakref.ref[DrawnMap] | None" = None

    def __init__(self, file: Any, drawn: dict[str, Any]) -> None:
        # node ids and ends are kept deflated too: a run's samples come a diagram at a time, and the map read
        # last keeps them made (:meth:`_read`)
        self._ends = zlib.compress(json_bytes([list(drawn["nodes"]), [list(e[:4]) for e in drawn["edges"]]]), 1)
        self._made: tuple[frozenset[str], list[tuple], dict[tuple[str, str], list[int]]] | None = None
        data = json_bytes(drawn)
        file.seek(0, 2)
        self._file, self._at, self._size = file, file.tell(), len(data)
        file.write(data)

    def _read(self) -> tuple[frozenset[str], list[tuple], dict[tuple[str, str], list[int]]]:
        if self._made is None:
            from benchmark.report.diagrams import edge_pairs

            last = DrawnMap._last() if DrawnMap._last is not None else None
            if last is not None:
                last._made = None
            nodes, ends = json.loads(zlib.decompress(self._ends))
            ends = [tuple(e) for e in ends]
            self._made = (frozenset(nodes), ends, edge_pairs(ends))
            DrawnMap._last = weakref.ref(self)
        return self._made

    @property
    def node_ids(self) -> frozenset[str]:
        return self._read()[0]

    @property
    def ends(self) -> list[tuple]:
        return self._read()[1]

    @property
    def pairs(self) -> dict[tuple[str, str], list[int]]:
        """The edges' indices by their ends (:func:`benchmark.report.diagrams.edge_pairs` of :attr:`ends`)."""
        return self._read()[2]

    def json_pieces(self) -> Iterator[bytes]:
        self._file.seek(self._at)
        yield self._file.read(self._size)
        self._file.seek(0, 2)

    def __getitem__(self, key: str) -> Any:
        return json.loads(b"".join(self.json_pieces()))[key]


class Drawings:
    """d2's drawings of the diagrams ``ids`` (SVG, into the render cache), made in the background from the
    moment this is made: d2 runs as its own process, so while it draws, the report's own work goes on (its
    plots and sections take one core). :func:`explorer_data` reads them, waiting for any not drawn yet; why a
    diagram is not drawn (no D2 file, d2 failed, ``render`` off) is kept by diagram id.

    ``workers`` threads wait on d2 at a time (default: one per core but the one the report's own work
    takes, at least one). Use as a context manager, or call :meth:`close`: drawings not started yet
    are then dropped.
    """

    def __init__(self, card: dict[str, Any], ids: Iterable[str], render: bool = True,
                 workers: int | None = None) -> None:
        import os
        from concurrent.futures import ThreadPoolExecutor

        root = (card.get("dataset") or {}).get("root")
        self.missing: dict[str, str] = {}
        self.paths: dict[str, Path] = {}
        for did in sorted(ids):
            if not render:
                self.missing[did] = "not rendered"
                continue
            path = Path(root) / "diagrams" / f"{did}.d2" if root else None
            if path is None or not path.exists():
                self.missing[did] = f"no D2 file at {path}" if path else "the run card names no dataset"
                continue
            self.paths[did] = path
        n = workers if workers is not None else max(1, (os.cpu_count() or 1) - 1)
        self._pool = ThreadPoolExecutor(max(1, min(n, len(self.paths) or 1)))
        # (each drawing goes to the render cache, not into memory: the explorer reads it back when it maps it)
        self._drawn = {did: self._pool.submit(self._draw, path) for did, path in sorted(self.paths.items())}

    @staticmethod
    def _draw(path: Path) -> str | None:
        """Why d2 could not draw ``path`` (None: drawn, in the render cache)."""
        import subprocess

        from benchmark.errors import DiagQAError
        from benchmark.report.diagrams import render_svg

        try:
            render_svg(path)
            return None
        except (RuntimeError, OSError, subprocess.SubprocessError, DiagQAError) as exc:
            return str(exc)   # one diagram d2 cannot draw never loses the report

    def svgs(self) -> Iterator[tuple[str, str | None, str | None]]:
        """(diagram id, SVG, None) or (diagram id, None, why not) of every diagram with a D2 file, in id order,
        each as soon as it is drawn."""
        from benchmark.report.diagrams import render_svg

        for did, drawn in self._drawn.items():
            err = drawn.result()
            if err is not None:
                yield did, None, err
                continue
            try:
                yield did, render_svg(self.paths[did]), None   # (from the cache it was just drawn into)
            except (RuntimeError, OSError) as exc:
                yield did, None, str(exc)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> "Drawings":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _diagrams(drawings: Drawings, graphs: dict[str, bytes]) -> tuple[dict[str, Any], dict[str, str]]:
    """The drawings of diagrams (:class:`Drawings`) and their maps (each diagram's gold graph in ``graphs`` as
    deflated JSON: see :func:`explorer_data`), and why those not drawn were not."""
    from benchmark.errors import DiagQAError
    from benchmark.report.diagrams import diagram_map

    out, missing = {}, dict(drawings.missing)
    texts = tempfile.TemporaryFile()
    for did, svg, err in drawings.svgs():
        if err is not None:
            missing[did] = err
            continue
        try:
            drawn_map = diagram_map(svg, json.loads(zlib.decompress(graphs[did])) if did in graphs else {})
        except (RuntimeError, OSError, DiagQAError) as exc:
            missing[did] = str(exc)
            continue
        # the map waits on disk, SVG and all, until the page is written (a run ten times as large draws
        # ten times as many diagrams)
        out[did] = DrawnMap(texts, drawn_map)
    return out, missing
