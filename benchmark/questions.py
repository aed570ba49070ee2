"""Question types, their structured arguments and answer kinds (DESIGN.md §4).

Every question has a structured form (``type`` + ``args`` over node ids) so its answer can
be recomputed by the reference solver (:mod:`benchmark.solver`). Answers are held in one
canonical Python form per *answer kind*:

========  =====================  =========================================
kind      canonical value        example
========  =====================  =========================================
bool      ``True`` / ``False``   edge_exists, reachable, ...
node      node id ``str``        decision_outcome
nodes     ``frozenset[str]``     successors, predecessors
int       ``int``                count_out, count_in
label     ``str``                edge_label
path      ``tuple[str, ...]``    path (node ids from source to target)
abstain   ``"abstain"``          absent (the right answer is to abstain)
========  =====================  =========================================

A question of kind ``abstain`` still *reads* like a question of another kind (its ``form`` arg:
"Does the Fraud Check call Billing?" reads as yes/no); answerers are shown that form, never the
type (:func:`surface_kind`), so the form of the prompt does not give the answer away.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from benchmark.graph import Edge, Subgraph


@dataclass(frozen=True)
class QuestionType:
    name: str
    args: tuple[str, ...]
    kind: str
    #: True when a negative answer (False) needs the closed set as proof
    closed_when_false: bool = False
    #: True when every answer needs the closed set as proof (universal questions)
    always_closed: bool = False
    #: True when a non-empty set answer needs closed sets as proof (``necessary``: each step's)
    closed_when_nonempty: bool = False
    doc: str = ""


QUESTION_TYPES: dict[str, QuestionType] = {t.name: t for t in [
    QuestionType("edge_exists", ("source", "target"), "bool", closed_when_false=True,
                 doc="Is there an arrow directly from source to target?"),
    QuestionType("reachable", ("source", "target"), "bool", closed_when_false=True,
                 doc="Can the flow get from source to target?"),
    QuestionType("reachable_avoiding", ("source", "target", "avoid"), "bool", closed_when_false=True,
                 doc="Can the flow get from source to target without passing through avoid?"),
    QuestionType("path", ("source", "target"), "path",
                 doc="Which steps lead from source to target (a shortest path)?"),
    QuestionType("successors", ("node",), "nodes", always_closed=True,
                 doc="Which nodes come directly after node?"),
    QuestionType("predecessors", ("node",), "nodes", always_closed=True,
                 doc="Which nodes lead directly into node?"),
    QuestionType("count_out", ("node",), "int", always_closed=True,
                 doc="How many distinct nodes come directly after node?"),
    QuestionType("count_in", ("node",), "int", always_closed=True,
                 doc="How many distinct nodes lead directly into node?"),
    QuestionType("edge_label", ("source", "target"), "label",
                 doc="What is written on the arrow from source to target?"),
    QuestionType("decision_outcome", ("node", "branch"), "node",
                 doc="Where does the flow go from decision node when the branch labelled `branch` is taken?"),
    QuestionType("common_downstream", ("first", "second", "target"), "bool", closed_when_false=True,
                 doc="Do both first and second eventually lead to target?"),
    QuestionType("scenario", ("start", "branches"), "node", always_closed=True,
                 doc="Starting at start and taking the listed branches in order at the decisions met, "
                     "where does the flow stop?"),
    QuestionType("necessary", ("source", "target"), "nodes", closed_when_nonempty=True,
                 doc="Which steps lie on every path from source to target?"),
    QuestionType("graph_count", ("what",), "int", always_closed=True,
                 doc="How many end states (what=end_states) or decisions (what=decisions) has the diagram?"),
    QuestionType("inside", ("container", "node"), "bool", closed_when_false=True,
                 doc="Is node drawn inside container (at any depth)?"),
    QuestionType("absent", ("entity", "form"), "abstain", always_closed=True,
                 doc="A question about something the diagram does not show: the right answer is to abstain."),
]}

#: argument names that hold node ids (the others, like ``branch``, are free text)
NODE_ARGS = {"source", "target", "avoid", "node", "first", "second", "start", "container"}
#: question types about the whole diagram: a context with another diagram's parts mixed in changes their answer
WHOLE_DIAGRAM_TYPES = frozenset({"graph_count", "absent"})
#: what a ``graph_count`` question counts (DESIGN.md §4)
GRAPH_COUNTS = ("end_states", "decisions")
#: the answer forms an ``absent`` question may read as
SURFACE_KINDS = ("bool", "node", "nodes", "int", "label", "path")
#: the canonical (and only) answer of an ``absent`` question
ABSTAIN = "abstain"
#: separates the branch labels of a ``scenario`` question (YAML may write a list instead)
BRANCH_SEPARATOR = ";"


def split_branches(value: str) -> list[str]:
    """The branch labels of a ``scenario`` question, in order.

    >>> split_branches("valid receipt; rejected")
    ['valid receipt', 'rejected']
    """
    return [b.strip() for b in str(value).split(BRANCH_SEPARATOR) if b.strip()]


def arg_problem(qtype: str, args: dict[str, Any]) -> str | None:
    """What is wrong with the free-text args of a question of ``qtype`` (None when nothing is).

    >>> arg_problem("graph_count", {"what": "loops"})
    "what must be one of end_states, decisions, got 'loops'"
    >>> arg_problem("absent", {"entity": "Fraud Check", "form": "bool"}) is None
    True
    """
    if qtype == "graph_count" and args.get("what") not in GRAPH_COUNTS:
        return f"what must be one of {', '.join(GRAPH_COUNTS)}, got {args.get('what')!r}"
    if qtype == "absent":
        if args.get("form") not in SURFACE_KINDS:
            return f"form must be one of {', '.join(SURFACE_KINDS)}, got {args.get('form')!r}"
        if not str(args.get("entity") or "").strip():
            return "entity must name what the question asks about"
    if qtype == "scenario" and not split_branches(args.get("branches", "")):
        return "branches must list at least one branch label"
    return None


@dataclass(frozen=True, slots=True, weakref_slot=True)
class Question:
    """One annotated question. ``answer`` is canonical for its type's kind."""

    id: str
    diagram: str
    text: str
    type: str
    args: tuple[tuple[str, str], ...]
    answer: Any
    certificate: Subgraph
    counter_prior: bool = False                  # measured at load: see benchmark.dataset.measure_counter_prior
    rationale: str = ""
    twin_of: str | None = None
    language: str = "en"
    file: str | None = None
    line: int | None = None
    extra: tuple[tuple[str, Any], ...] = field(default=())
    counter_prior_annotated: bool | None = None  # the annotation's own flag, when it has one (compared, not used)

    @property
    def qtype(self) -> QuestionType:
        return QUESTION_TYPES[self.type]

    @property
    def kind(self) -> str:
        return QUESTION_TYPES[self.type].kind

    @property
    def arg(self) -> dict[str, str]:
        return dict(self.args)

    def node_args(self) -> list[str]:
        return [v for k, v in self.args if k in NODE_ARGS]

    def needs_closure(self, answer: Any | None = None) -> bool:
        """True when proving ``answer`` (default: the gold one) takes the closed set."""
        t = self.qtype
        a = self.answer if answer is None else answer
        return t.always_closed or (t.closed_when_false and a is False) or (t.closed_when_nonempty and bool(a))

    @property
    def surface_kind(self) -> str:
        """:func:`surface_kind` of this question."""
        return surface_kind(self.type, self.arg)


def surface_kind(qtype: str, args: dict[str, str]) -> str:
    """The answer form a question *reads* as: its kind, or for an ``absent`` question its ``form``.

    >>> surface_kind("absent", {"entity": "Fraud Check", "form": "bool"}), surface_kind("path", {})
    ('bool', 'path')
    """
    if qtype == "absent":
        return args.get("form", "bool")
    return QUESTION_TYPES[qtype].kind


def _is_id(value: Any) -> bool:
    """A node id as YAML or JSON may write it: a string or a bare integer."""
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def canonical_answer(kind: str, value: Any) -> Any:
    """Canonical form of an annotated (YAML/JSON) answer value; raises ValueError when it does not fit.

    >>> canonical_answer("bool", "yes"), canonical_answer("nodes", ["b", "a"]) == frozenset({"a", "b"})
    (True, True)
    """
    if kind == "bool":
        if isinstance(value, bool):
            return value
        s = str(value).strip().lower()
        if s in ("yes", "true", "да"):
            return True
        if s in ("no", "false", "нет"):
            return False
        raise ValueError(f"expected yes/no, got {value!r}")
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, (int, str)) or not re.fullmatch(r"-?[0-9]+", str(value).strip()):
            raise ValueError(f"expected an integer, got {value!r}")
        return int(value)
    if kind in ("node", "label"):
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            raise ValueError(f"expected a string, got {value!r}")
        return str(value)
    if kind == "nodes":
        if not isinstance(value, (list, tuple, set, frozenset)) or not all(map(_is_id, value)):
            raise ValueError(f"expected a list of node ids, got {_short(value)}")
        return frozenset(str(v) for v in value)
    if kind == "abstain":
        if str(value).strip().casefold() != ABSTAIN:
            raise ValueError(f"expected {ABSTAIN!r} (the right answer is to abstain), got {value!r}")
        return ABSTAIN
    if kind == "path":
        if not isinstance(value, (list, tuple)) or len(value) < 1 or not all(map(_is_id, value)):
            raise ValueError(f"expected a list of node ids from source to target, got {_short(value)}")
        return tuple(str(v) for v in value)
    raise ValueError(f"unknown answer kind {kind!r}")


def answer_to_json(value: Any) -> Any:
    """JSON-friendly form of a canonical answer (sets sorted)."""
    if isinstance(value, frozenset):
        return sorted(value)
    if isinstance(value, tuple):
        return list(value)
    return value


def certificate_from_json(data: Any) -> Subgraph:
    """``{"nodes": [...], "edges": [[src, dst], [src, dst, label], ...]}`` -> Subgraph (flow direction).

    Raises ValueError with what is wrong. Edge directedness is resolved against the
    diagram later (:func:`benchmark.solver.resolve_certificate`).
    """
    if data is None:
        return Subgraph()
    if not isinstance(data, dict):
        raise ValueError("certificate must be a mapping with 'nodes' and 'edges'")
    unknown = set(data) - {"nodes", "edges"}
    if unknown:
        raise ValueError(f"certificate has unknown keys {sorted(unknown)}")
    nodes = [] if data.get("nodes") is None else data["nodes"]
    edges = [] if data.get("edges") is None else data["edges"]
    if not isinstance(nodes, list) or not all(map(_is_id, nodes)):
        raise ValueError("certificate nodes must be a list of node ids")
    if not isinstance(edges, list):
        raise ValueError(f"certificate edges must be a list of [src, dst] or [src, dst, label], got {_short(edges)}")
    out_edges = []
    for e in edges:
        if not isinstance(e, (list, tuple)) or len(e) not in (2, 3) or not all(map(_is_id, e[:2])) \
                or (len(e) == 3 and e[2] is not None and not _is_id(e[2])):
            raise ValueError(f"certificate edge {_short(e)} must be [src, dst] or [src, dst, label]")
        out_edges.append(Edge(str(e[0]), str(e[1]), str(e[2]) if len(e) == 3 and e[2] is not None else ""))
    return Subgraph(frozenset(str(n) for n in nodes), frozenset(out_edges))
