"""The sample record: one line of ``samples.jsonl`` (one question x variant x answerer).

A record holds everything a re-score needs -- the question's structured form and gold
certificate, the retrieved subgraph and the context exactly as the answerer saw it, the answer
as given -- so metrics can be recomputed without running any stage again. Like
lm-evaluation-harness it carries hashes of its question, context and answer, so two runs can
be compared line by line.

The JSON forms here are lossless: ``value == from_json(to_json(value))``.

>>> from benchmark.graph import Edge, Subgraph
>>> s = Subgraph(frozenset({"a"}), frozenset({Edge("a", "b", "x", directed=False)}))
>>> subgraph_from_json(subgraph_to_json(s)) == s
True
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, fields
from typing import Any

import networkx as nx

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - a declared dependency; json reads the same lines, slower
    _orjson = None

from benchmark.graph import Edge, Subgraph, graph_of
from benchmark.questions import Question, answer_to_json, canonical_answer

SCHEMA_VERSION = 1


def loads_line(line: str | bytes) -> Any:
    """One JSON value, as ``json.loads`` reads it: through orjson where it is installed (about twice
    as fast on sample lines); what orjson refuses (``NaN``, integers beyond 64 bits, lone
    surrogates) is read by ``json``, which also words the error of a line that is not JSON.

    >>> loads_line('{"a": [1, 2.5, null, "é"]}'), loads_line('{"x": NaN}')["x"] != 0
    ({'a': [1, 2.5, None, 'é']}, True)
    """
    if _orjson is not None:
        try:
            return _orjson.loads(line)
        except _orjson.JSONDecodeError:
            pass
    return json.loads(line)


def dumps_line(value: Any) -> str:
    """One JSON line of ``value``, keys sorted, UTF-8 text as it is: through orjson where it is installed
    (several times faster than ``json``, compact separators), else ``json``; what orjson refuses is
    written by ``json``.

    >>> loads_line(dumps_line({"b": [1, 2.5e-05, None], "a": "é"})) == {"a": "é", "b": [1, 2.5e-05, None]}
    True
    """
    if _orjson is not None:
        try:
            return _orjson.dumps(value, option=_orjson.OPT_SORT_KEYS | _orjson.OPT_NON_STR_KEYS).decode("utf-8")
        except _orjson.JSONEncodeError:
            pass
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def sha256_json(value: Any) -> str:
    """SHA-256 of ``value`` as canonical JSON (sorted keys, UTF-8)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- lossless JSON forms of the values that flow between stages ---------------------------------

def subgraph_to_json(sub: Subgraph) -> dict[str, Any]:
    """``{"nodes": [...], "edges": [[src, dst, label, directed], ...]}`` (sorted; nodes as given)."""
    return {"nodes": sorted(sub.nodes), "edges": [[e.src, e.dst, e.label, e.directed] for e in sorted(sub.edges)]}


def subgraph_from_json(data: dict[str, Any]) -> Subgraph:
    return Subgraph(frozenset(data.get("nodes") or ()),
                    frozenset(Edge(str(s), str(d), str(lab), bool(dr)) for s, d, lab, dr in data.get("edges") or ()))


def question_to_json(q: Question) -> dict[str, Any]:
    return {"id": q.id, "diagram": q.diagram, "text": q.text, "type": q.type, "args": dict(q.args),
            "answer": answer_to_json(q.answer), "certificate": subgraph_to_json(q.certificate),
            "counter_prior": q.counter_prior, "rationale": q.rationale, "twin_of": q.twin_of,
            "language": q.language, "file": q.file, "line": q.line,
            "extra": {k: v for k, v in q.extra}}


def question_from_json(d: dict[str, Any]) -> Question:
    from benchmark.questions import QUESTION_TYPES

    kind = QUESTION_TYPES[d["type"]].kind
    return Question(id=d["id"], diagram=d["diagram"], text=d["text"], type=d["type"],
                    args=tuple((k, str(v)) for k, v in d["args"].items()),
                    answer=canonical_answer(kind, d["answer"]), certificate=subgraph_from_json(d["certificate"]),
                    counter_prior=bool(d.get("counter_prior")), rationale=d.get("rationale") or "",
                    twin_of=d.get("twin_of"), language=d.get("language") or "en", file=d.get("file"),
                    line=d.get("line"), extra=tuple(sorted((d.get("extra") or {}).items())))


def context_to_json(ctx: Any) -> dict[str, Any]:
    """A :class:`benchmark.context.Context` as the answerer saw it: subgraph, node attributes, text."""
    g = ctx.graph
    attrs = {n: [g.nodes[n].get("label"), g.nodes[n].get("shape"), g.nodes[n].get("parent")] for n in sorted(g.nodes)}
    out = {"diagram": ctx.diagram_id, **subgraph_to_json(ctx.subgraph), "node_attrs": attrs, "text": ctx.text}
    marked = sorted([u, v, d.get("label") or "", d.get("directed", True), d.get("kind", "flow"), bool(d.get("parallel"))]
                    for u, v, d in g.edges(data=True) if d.get("kind", "flow") != "flow" or d.get("parallel"))
    if marked:  # the edges that are not plain flow (DESIGN.md §3): their kind must survive the record
        out["edge_kinds"] = marked
    return out


def _mark_edges(g: nx.MultiDiGraph, marked: list) -> nx.MultiDiGraph:
    """Set ``kind`` and ``parallel`` on the edges of ``g`` that ``marked`` names (see :func:`context_to_json`)."""
    for src, dst, label, directed, kind, parallel in marked:
        for d in (g._succ[src].get(dst, {}).values() if src in g else ()):
            if d.get("label") == label and d.get("directed", True) == directed:
                d["kind"], d["parallel"] = kind, parallel
    return g


def context_from_json(d: dict[str, Any], like: tuple[dict[str, Any], Subgraph] | None = None) -> Any:
    """Rebuild the Context: its graph is ``restrict`` of the stored node attributes, as ``make_context`` made it.

    ``like`` is a stored subgraph and the :class:`Subgraph` already rebuilt from it (such as the
    record's retrieved one): when the context holds the same nodes and edges, that one is used.
    """
    from benchmark.context import Context

    if like is not None and like[0].get("nodes") == d.get("nodes") and like[0].get("edges") == d.get("edges"):
        sub = like[1]
    else:
        sub = subgraph_from_json(d)
    attrs = {n: {"label": label, "shape": shape, "parent": parent}
             for n, (label, shape, parent) in (d.get("node_attrs") or {}).items()}
    return Context(diagram_id=d["diagram"], subgraph=sub, graph=_mark_edges(graph_of(sub, attrs), d.get("edge_kinds") or []),
                   text=d.get("text") or "")


def _jsonable(value: Any) -> Any:
    if isinstance(value, (frozenset, set)):
        return sorted((_jsonable(v) for v in value), key=str)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def answer_to_json_record(a: Any) -> dict[str, Any]:
    """A :class:`benchmark.answers.Answer` as JSON (sets become sorted lists, tuples lists)."""
    return _jsonable(a.to_json())


def answer_from_json_record(d: dict[str, Any]) -> Any:
    from benchmark.answers import Answer

    return Answer.from_json(d)


def graph_to_json(g: nx.MultiDiGraph) -> dict[str, Any]:
    return nx.node_link_data(g, edges="edges")


def graph_from_json(d: dict[str, Any]) -> nx.MultiDiGraph:
    return nx.node_link_graph(d, directed=True, multigraph=True, edges="edges")


# -- the record ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class SampleRecord:
    """One sample. ``context``/``answer``/``metrics`` are None when an earlier stage failed (see ``error``)."""

    sample_id: str
    question_id: str
    diagram_id: str
    variant: str
    finder: str
    source: str
    selector: str
    answerer: str
    question: dict[str, Any]
    found_diagram: str | None = None          # the diagram the finder chose
    finder_rank: int | None = None            # 1-based rank of the question's own diagram
    retrieved: dict[str, Any] | None = None   # the selector's subgraph
    context: dict[str, Any] | None = None
    answer: dict[str, Any] | None = None
    metrics: dict[str, Any] | None = None
    error: dict[str, Any] | None = None       # {"stage", "type", "message"} of the stage that raised
    timings: dict[str, float] = field(default_factory=dict)
    hashes: dict[str, str] = field(default_factory=dict)
    schema: int = SCHEMA_VERSION

    def to_json(self) -> dict[str, Any]:
        # fields already hold JSON-ready values: a shallow copy (dataclasses.asdict deep-copies, slowly)
        return dict(vars(self))

    def dumps(self) -> str:
        return dumps_line(self.to_json())

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "SampleRecord":
        unknown = set(d) - _FIELD_NAMES
        if unknown:
            raise ValueError(f"unknown record fields {sorted(unknown)}")
        return cls(**d)

    def with_metrics(self, metrics: dict[str, Any] | None, error: dict[str, Any] | None = None) -> "SampleRecord":
        from dataclasses import replace

        return replace(self, metrics=metrics, error=error if error is not None else self.error)


_FIELD_NAMES = frozenset(f.name for f in fields(SampleRecord))


def sample_id(question_id: str, variant: str, answerer: str) -> str:
    return f"{question_id}|{variant}|{answerer}"


def question_hash(question: dict[str, Any]) -> str:
    """Hash of a question's text and structure (id, text, type, args, answer, certificate)."""
    return sha256_json({k: question[k] for k in ("id", "text", "type", "args", "answer", "certificate")})


def context_hash(context: dict[str, Any]) -> str:
    """Hash of a context as the answerer saw it (subgraph and text)."""
    return sha256_json({k: context[k] for k in ("nodes", "edges", "text")})


def answer_hash(answer: dict[str, Any]) -> str:
    """Hash of an answer as given (raw, evidence, explanation, error; not its timings)."""
    return sha256_json({k: answer[k] for k in ("raw", "evidence", "explanation", "error")})


def record_hashes(question: dict[str, Any], context: dict[str, Any] | None, answer: dict[str, Any] | None) -> dict[str, str]:
    """Hashes of the question (structure and text), the context as seen, and the answer as given."""
    out = {"question": question_hash(question)}
    if context is not None:
        out["context"] = context_hash(context)
    if answer is not None:
        out["answer"] = answer_hash(answer)
    return out


def read_samples(path: Any) -> list[SampleRecord]:
    """Every record of a ``samples.jsonl``; a bad line is an error naming the file and line."""
    from pathlib import Path

    from benchmark.errors import InputError

    out = []
    with Path(path).open(encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                out.append(SampleRecord.from_json(loads_line(line)))
            except (ValueError, TypeError, KeyError) as exc:
                raise InputError(f"not a sample record: {exc}", file=str(path), line=i) from exc
    return out
