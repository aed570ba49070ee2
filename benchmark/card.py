"""The dataset card's numbers: counts computed from a loaded :class:`~benchmark.dataset.Dataset`.

Everything here is a pure function of the dataset, so the card in ``annotations/README.md`` is
regenerated rather than typed (``diagqa card --write``) and a test can tell when it is stale.

>>> share(3, 4), share(0, 0)
(0.75, None)
>>> size_bucket(8), size_bucket(25), size_bucket(41), size_bucket(95)
('6-10', '11-25', '41-79', '80-250')
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

import networkx as nx

from benchmark.dataset import Dataset, Diagram
from benchmark.graph import EDGE_KINDS, out_edges
from benchmark.questions import QUESTION_TYPES

BEGIN, END = "<!-- card:begin -->", "<!-- card:end -->"

#: node-count buckets of the size table: (name, lowest, highest)
SIZE_BUCKETS = (("under 6", 0, 5), ("6-10", 6, 10), ("11-25", 11, 25), ("26-40", 26, 40), ("41-79", 41, 79),
                ("80-250", 80, 250), ("over 250", 251, None))


def share(part: int, whole: int) -> float | None:
    """``part / whole``, or None when there is nothing to divide (an unmeasured share, never 0)."""
    return part / whole if whole else None


def size_bucket(n_nodes: int) -> str:
    """Name of the :data:`SIZE_BUCKETS` bucket a diagram with ``n_nodes`` nodes falls in."""
    for name, lo, hi in SIZE_BUCKETS:
        if n_nodes >= lo and (hi is None or n_nodes <= hi):
            return name
    raise ValueError(n_nodes)  # pragma: no cover - buckets cover every count


def has_containers(g: nx.MultiDiGraph) -> bool:
    """True when some node sits inside a container.

    >>> from benchmark.graph import build_graph
    >>> has_containers(build_graph({"nodes": [{"id": "vpc"}, {"id": "vpc.web", "parent": "vpc"}]}))
    True
    """
    return any(d.get("parent") for _, d in g.nodes(data=True))


def decision_nodes(g: nx.MultiDiGraph) -> list[str]:
    """Diamond-shaped nodes with at least two labelled outgoing branches.

    >>> from benchmark.graph import build_graph
    >>> g = build_graph({"nodes": [{"id": "ok", "shape": "diamond"}, {"id": "a"}, {"id": "b"}],
    ...                  "edges": [{"src": "ok", "dst": "a", "label": "yes"}, {"src": "ok", "dst": "b", "label": "no"}]})
    >>> decision_nodes(g)
    ['ok']
    """
    return sorted(n for n, d in g.nodes(data=True)
                  if d.get("shape") == "diamond" and sum(1 for _, e in out_edges(g, n) if e.label) >= 2)


def twin_pairs(ds: Dataset) -> list[tuple[str, str]]:
    """Pairs of diagrams that name each other as twins (each pair once, sorted)."""
    pairs = set()
    for d in ds.diagrams.values():
        other = ds.diagrams.get(d.twin) if d.twin else None
        if other is not None and other.twin == d.id:
            pairs.add(tuple(sorted((d.id, other.id))))
    return sorted(pairs)


@dataclass(frozen=True)
class PriorFloor:
    """The prior baselines that need no model (:mod:`benchmark.priors`), as the card reports them."""

    accuracy: dict[str, dict[str, float | None]]   # group (all, yes/no, counter-prior) -> baseline -> accuracy
    strongest: str | None                           # on all questions: the guessability floor
    strongest_yes_no: str | None
    counter_prior_measured: int                     # yes/no and node questions the strongest prior gets wrong
    counter_prior_defined: int                      # yes/no and node questions
    counter_prior_agree: int                        # of those, where the annotated flag says the same
    counter_prior_annotated: int = 0                # of those, how many carry an annotated flag at all
    balance_problems: tuple[str, ...] = ()          # yes shares per type and cue cell, text-cue gain

    @property
    def yes_no_gap(self) -> float | None:
        """Accuracy of the strongest prior on yes/no minus the majority baseline's (0 when majority is the strongest)."""
        yn = self.accuracy.get("yes/no", {})
        best, majority = yn.get(self.strongest_yes_no or ""), yn.get("majority")
        return None if best is None or majority is None else best - majority


#: the groups of the priors table that the card shows
PRIOR_GROUPS = ("all", "yes/no", "counter-prior (annotated)")


def prior_floor(ds: Dataset) -> PriorFloor:
    """Run the no-model prior baselines on ``ds`` (deterministic; well under a second for the bundled data)."""
    from benchmark.priors import run_priors

    from benchmark.priors import balance

    res = run_priors(ds, known=ds.prior_predictions)   # (the set-free baselines ran when the dataset loaded)
    data = res.to_json()["counter_prior"]
    return PriorFloor(
        accuracy={g: {b: c.accuracy for b, c in res.table[g].items()} for g in PRIOR_GROUPS if g in res.table},
        strongest=res.floor, strongest_yes_no=res.strongest_on("yes/no"),
        counter_prior_measured=data["measured"], counter_prior_defined=data["defined_on"],
        counter_prior_agree=data["agree"], counter_prior_annotated=data["annotated_on"],
        balance_problems=tuple(balance(res.questions).problems()))


@dataclass(frozen=True)
class CardStats:
    """The counts the card reports. Every mapping is sorted by key."""

    diagrams: int
    questions: int
    domains: dict[str, tuple[int, int]]          # domain -> (diagrams, questions)
    sizes: dict[str, int]                         # size bucket -> diagrams
    min_nodes: int | None
    max_nodes: int | None
    types: dict[str, int]                         # every question type, 0 included
    kinds: dict[str, int]                         # answer kind -> questions
    yes_no: int
    yes: int
    counter_prior: int                            # measured (yes/no and node questions only)
    counter_prior_defined: int                    # yes/no and node questions
    closed_set: int                               # questions whose proof is a closed set
    languages: dict[str, tuple[int, int]]         # language -> (diagrams, questions)
    twin_pairs: int
    twin_questions: int
    container_diagrams: int
    decision_diagrams: int
    priors: PriorFloor | None = None
    #: edges of the dataset by kind (flow, data, association) and the parallel fork edges among the flow ones
    edge_kinds: dict[str, int] = field(default_factory=dict)
    #: questions with a counterfactual pair (an edit that flips the solver's answer and that the D2 text carries)
    pairs: int | None = None
    #: question type -> questions of that type without a pair
    pairless: dict[str, int] = field(default_factory=dict)

    @property
    def pair_share(self) -> float | None:
        return None if self.pairs is None else share(self.pairs, self.questions)

    @property
    def yes_share(self) -> float | None:
        return share(self.yes, self.yes_no)

    @property
    def counter_prior_share(self) -> float | None:
        """Share of the yes/no and node questions (the only ones the definition covers) that are counter-prior."""
        return share(self.counter_prior, self.counter_prior_defined)

    @property
    def closed_set_share(self) -> float | None:
        return share(self.closed_set, self.questions)


def _count_pairs(items: Iterable[tuple[str, int]]) -> dict[str, tuple[int, int]]:
    diagrams: Counter[str] = Counter()
    questions: Counter[str] = Counter()
    for key, n_q in items:
        diagrams[key] += 1
        questions[key] += n_q
    return {k: (diagrams[k], questions[k]) for k in sorted(diagrams)}


def card_stats(ds: Dataset) -> CardStats:
    """Compute the card's counts for ``ds`` (parses every diagram)."""
    diagrams: list[Diagram] = [ds.diagrams[k] for k in sorted(ds.diagrams)]
    questions = [q for d in diagrams for q in d.questions]
    node_counts = [d.graph.number_of_nodes() for d in diagrams]
    sizes = Counter(size_bucket(n) for n in node_counts)
    bools = [q for q in questions if q.kind == "bool"]
    return CardStats(
        diagrams=len(diagrams),
        questions=len(questions),
        domains=_count_pairs((d.domain or "unknown", len(d.questions)) for d in diagrams),
        sizes={name: sizes.get(name, 0) for name, _, _ in SIZE_BUCKETS},
        min_nodes=min(node_counts) if node_counts else None,
        max_nodes=max(node_counts) if node_counts else None,
        types={t: sum(1 for q in questions if q.type == t) for t in QUESTION_TYPES},
        kinds=dict(sorted(Counter(q.kind for q in questions).items())),
        yes_no=len(bools),
        yes=sum(1 for q in bools if q.answer is True),
        counter_prior=sum(1 for q in questions if q.counter_prior),
        counter_prior_defined=sum(1 for q in questions if q.kind in ("bool", "node")),
        closed_set=sum(1 for q in questions if q.needs_closure()),
        languages=_count_pairs((d.language, len(d.questions)) for d in diagrams),
        twin_pairs=len(twin_pairs(ds)),
        twin_questions=sum(1 for q in questions if dict(q.extra).get("twin_question")),
        container_diagrams=sum(1 for d in diagrams if has_containers(d.graph)),
        decision_diagrams=sum(1 for d in diagrams if decision_nodes(d.graph)),
        priors=prior_floor(ds) if questions else None,
        edge_kinds=edge_kind_counts(d.graph for d in diagrams),
        **pair_counts(diagrams),
    )


def pair_counts(diagrams: Iterable[Diagram]) -> dict[str, Any]:
    """``pairs`` (questions that ``diagqa perturb`` can pair) and ``pairless`` (per type, those it cannot)."""
    from benchmark.perturb import has_pair

    pairs, pairless = 0, Counter()
    for d in diagrams:
        realised: dict = {}
        edited: dict = {}   # (let go with the diagram)
        for q in d.questions:
            if has_pair(q, d.parsed, d.graph, d.source, realised, edited):
                pairs += 1
            else:
                pairless[q.type] += 1
    return {"pairs": pairs, "pairless": dict(sorted(pairless.items()))}


def edge_kind_counts(graphs: Iterable[nx.MultiDiGraph]) -> dict[str, int]:
    """Edges by kind over ``graphs``: ``flow``, ``data``, ``association`` and ``parallel`` (the
    flow edges out of a fork whose branches all run), every key present.

    >>> from benchmark.graph import build_graph
    >>> edge_kind_counts([build_graph({"edges": [{"src": "a", "dst": "b", "classes": ["parallel"]},
    ...                                          {"src": "a", "dst": "db", "classes": ["data"]}]})])
    {'flow': 1, 'data': 1, 'association': 0, 'parallel': 1}
    """
    counts = dict.fromkeys(EDGE_KINDS, 0) | {"parallel": 0}
    for g in graphs:
        for _, _, d in g.edges(data=True):
            kind = d.get("kind", "flow")
            counts[kind] += 1
            counts["parallel"] += kind == "flow" and bool(d.get("parallel"))
    return counts


#: the card's statement of the edge convention (DESIGN.md §3)
EDGE_CONVENTION = (
    "Questions are reasoned over the flow edges only; `edge_exists` and `edge_label` ask about any drawn arrow. "
    "In plain D2, `class: data` (drawn dashed) marks a data feed, read or query and `class: association` "
    "(a `--` line, dashed) a line that relates two nodes: no step of the flow follows either. `class: parallel` "
    "(drawn thick) marks the edges out of a fork whose branches all run: a `reachable_avoiding` yes never leaves "
    "such a fork by one branch while another branch reaches the avoided node.")


@dataclass(frozen=True)
class Target:
    """One dataset target: what is required, what the data has, and whether it is met."""

    name: str
    required: str
    actual: str
    met: bool


def _pct(x: float | None) -> str:
    """Percentage with one decimal, or ``n/a`` when unmeasured.

    >>> _pct(0.5), _pct(None)
    ('50.0 %', 'n/a')
    """
    return "n/a" if x is None else f"{100 * x:.1f} %"


def targets(s: CardStats) -> list[Target]:
    """The dataset's targets (issue "dataset") checked against ``s``."""
    low_type = min(s.types.values()) if s.types else 0
    low_names = ", ".join(t for t, n in s.types.items() if n == low_type)
    ys, cp = s.yes_share, s.counter_prior_share
    out = [
        Target("questions", ">= 450", str(s.questions), s.questions >= 450),
        Target("questions per type", ">= 20 each", f"min {low_type} ({low_names})", low_type >= 20),
        Target("yes share of yes/no answers", "40-60 %", _pct(ys), ys is not None and 0.4 <= ys <= 0.6),
    ]
    if s.priors is not None:
        bad = s.priors.balance_problems
        cells = [b for b in bad if not b.startswith("text cues")]
        out.append(Target("yes share per yes/no type and per (type, cue word) cell of 5 or more", "40-60 % each",
                          "all inside" if not cells else f"{len(cells)} outside", not cells))
        gap = s.priors.yes_no_gap
        out.append(Target("strongest prior on yes/no over the majority baseline", "<= +5 points",
                          "n/a" if gap is None else f"{100 * gap:+.1f}", gap is not None and gap <= 0.05 + 1e-9))
    out += [
        Target("counter-prior share of yes/no and node questions (measured)", ">= 33.3 %", _pct(cp),
               cp is not None and 3 * s.counter_prior >= s.counter_prior_defined),
        Target("diagrams with containers", ">= 10", str(s.container_diagrams), s.container_diagrams >= 10),
        Target("diagrams of 80-250 nodes (retrieval matters)", ">= 10", str(s.sizes.get("80-250", 0)),
               s.sizes.get("80-250", 0) >= 10),
        Target("diagrams with labelled decisions", ">= 10", str(s.decision_diagrams), s.decision_diagrams >= 10),
        Target("Russian diagrams", ">= 5", str(s.languages.get("ru", (0, 0))[0]), s.languages.get("ru", (0, 0))[0] >= 5),
        Target("twin pairs", ">= 6", str(s.twin_pairs), s.twin_pairs >= 6),
    ]
    if s.pair_share is not None:
        out.append(Target("questions with a counterfactual pair (`diagqa perturb`)", ">= 90 %", _pct(s.pair_share),
                          10 * (s.pairs or 0) >= 9 * s.questions))
    return out


def _table(header: tuple[str, ...], rows: Iterable[tuple]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def render_markdown(s: CardStats) -> str:
    """The card's statistics section as markdown (deterministic for the same dataset)."""
    lines = [f"{s.diagrams} diagrams, {s.questions} questions "
             f"(generated by `diagqa card`; do not edit by hand).", ""]
    met = targets(s)
    lines += ["**Targets**", ""]
    lines += _table(("target", "required", "dataset", "met"),
                    ((t.name, t.required, t.actual, "yes" if t.met else "**no**") for t in met))
    lines += ["", "**By domain**", ""]
    lines += _table(("domain", "diagrams", "questions"), ((k, d, q) for k, (d, q) in s.domains.items()))
    lines += ["", f"**By size** (nodes per diagram, containers included; smallest {s.min_nodes}, "
                  f"largest {s.max_nodes})", ""]
    lines += _table(("nodes", "diagrams"), s.sizes.items())
    lines += ["", "**By question type**", ""]
    lines += _table(("type", "answer kind", "questions"),
                    ((t, QUESTION_TYPES[t].kind, n) for t, n in s.types.items()))
    lines += ["", "**Answers and priors**", ""]
    lines += _table(("measure", "count", "share"), [
        ("yes/no questions answered yes", f"{s.yes} of {s.yes_no}", _pct(s.yes_share)),
        ("counter-prior questions (measured; yes/no and node answers)", f"{s.counter_prior} of {s.counter_prior_defined}",
         _pct(s.counter_prior_share)),
        ("negative / universal questions (closed-set certificate)", f"{s.closed_set} of {s.questions}",
         _pct(s.closed_set_share)),
    ] + ([("questions with a counterfactual pair (" + (", ".join(f"{t}: {n} without" for t, n in s.pairless.items())
                                                         or "every question") + ")",
           f"{s.pairs} of {s.questions}", _pct(s.pair_share))] if s.pairs is not None else []))
    if s.priors is not None:
        lines += ["", "**Prior baselines** (accuracy without the diagram's edges; `diagqa priors` adds a text-only "
                      "model when one is configured)", ""]
        p = s.priors
        baselines = list(p.accuracy.get("all", {}))
        lines += _table(("questions",) + tuple(baselines),
                        ((g,) + tuple(_pct(p.accuracy[g][b]) for b in baselines) for g in p.accuracy))
        gap = p.yes_no_gap
        lines += ["", f"Strongest prior baseline (the guessability floor): {p.strongest}, "
                      f"{_pct(p.accuracy['all'][p.strongest]) if p.strongest else 'n/a'} of all questions. "
                      f"On yes/no: {p.strongest_yes_no}, {'n/a' if gap is None else f'{100 * gap:+.1f}'} points "
                      f"over the majority baseline (target: at most +5; "
                      f"{'met' if gap is not None and gap <= 0.05 else '**not met**'}). "
                      f"Counter-prior is measured, not annotated: a yes/no or node question is counter-prior when the "
                      f"strongest prior on its answer kind gets it wrong (computed when the dataset loads): "
                      f"{p.counter_prior_measured} of {p.counter_prior_defined}. Where an annotation still carries "
                      f"its own flag ({p.counter_prior_annotated} questions) it agrees with the measurement on "
                      f"{p.counter_prior_agree}."]
        for problem in p.balance_problems:
            lines.append(f"- balance: {problem}")
        lines += ["", "For successors, predecessors, count_in and count_out the certificate *is* the answer (the "
                      "node, its neighbours on one side and those edges), so a *grounded* answer there cannot be told "
                      "from one copied out of the context: reading is judged on the other types, on the counter-prior "
                      "questions and on counterfactual pairs (`diagqa perturb`)."]
    lines += ["", "**By language**", ""]
    lines += _table(("language", "diagrams", "questions"), ((k, d, q) for k, (d, q) in s.languages.items()))
    lines += ["", "**Structure**", ""]
    lines += _table(("feature", "diagrams"), [
        ("containers (a node inside another)", s.container_diagrams),
        ("labelled decisions (a diamond with two or more labelled branches)", s.decision_diagrams),
        ("twin pairs", f"{s.twin_pairs} pairs ({2 * s.twin_pairs} diagrams, {s.twin_questions} twin questions)"),
    ])
    if s.edge_kinds:
        k = s.edge_kinds
        lines += ["", "**Edge kinds**", "", EDGE_CONVENTION, ""]
        lines += _table(("kind", "edges"), [("flow", k["flow"]), ("of them out of a parallel fork", k["parallel"]),
                                            ("data", k["data"]), ("association", k["association"])])
    return "\n".join(lines) + "\n"


def _markers(text: str) -> tuple[int, int]:
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the card needs the markers {BEGIN} and {END}, in that order")
    return start + len(BEGIN), end


def replace_section(text: str, section: str) -> str:
    """``text`` with everything between :data:`BEGIN` and :data:`END` replaced by ``section``.

    >>> replace_section("a\\n<!-- card:begin -->\\nold\\n<!-- card:end -->\\nb", "new\\n")
    'a\\n<!-- card:begin -->\\nnew\\n<!-- card:end -->\\nb'
    """
    start, end = _markers(text)
    return text[:start] + "\n" + section + text[end:]


def current_section(text: str) -> str:
    """What is between the markers now (the inverse of :func:`replace_section`)."""
    start, end = _markers(text)
    return text[start:end].removeprefix("\n")
