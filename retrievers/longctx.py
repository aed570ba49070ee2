"""``long<n>k-<position>-<base>``: the ``base`` selection buried in distractor edges, about n·1000 tokens long.

A long-context ("lost in the middle") probe. The evidence is what the ``base`` selector chose
(with ``oracle``, exactly the gold certificate); it stays one block of lines, in the context text's
usual sorted order, placed at the ``start``, ``middle`` or ``end`` of the context. Around it go
distractor edges, one line each:

* edges of the same diagram's **far regions**: both ends more than ``far_hops`` (2) hops, edges
  walked either way, from every evidence node (none when the evidence is empty);
* edges of **other diagrams** of the dataset folder in the same language (never the diagram's twin,
  nor one whose twin it is), with their node ids prefixed ``<diagram>::`` so they never meet the question's nodes, and
  without any edge whose end carries a label of this diagram (two different "Users DB" would
  change the question, not only its length).

The real edges of a dataset run out (the bundled one holds about 8k tokens of them for a question);
a longer context goes on with **recombined** foreign edges (:meth:`LongContextSelector.recombined`):
each joins two foreign nodes of *different* other diagrams, under a label taken from a real foreign
edge, so it is made of the dataset's own words but states a relation no diagram holds. Both ends
are foreign, so no recombined edge touches the question's nodes nor changes its answer.
A question about the whole diagram (:data:`benchmark.questions.WHOLE_DIAGRAM_TYPES`: how many end
states or decisions it has, whether it shows something at all) gets no other diagram's edges: mixed
in without a boundary they would change its answer, not only its length.

Distractors are drawn in a seeded order (``random.Random`` of the seed and the question id), the
same for every length and position of a question: a longer context extends a shorter one, and
the three positions hold the same lines. Lines are added until the context reaches ``n``·1000
tokens, counted as characters / 4 (:func:`estimate_tokens`), real edges first, then recombined ones;
only a dataset with fewer than two other diagrams (in the question's language) runs out, and the
context is then shorter; the analysis reads the real length from the stored context text.

The context graph holds the distractor edges too, so a graph reader such as the solver sees all
of them; the solver, which reasons from the question's node ids, answers as on ``base`` alone
(``tests/test_longctx.py``).
"""
from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import networkx as nx

from benchmark.context import edge_line
from benchmark.graph import Edge, Subgraph, graph_edges, node_label
from benchmark.questions import WHOLE_DIAGRAM_TYPES
from benchmark.stages import SELECTORS

POSITIONS = ("start", "middle", "end")
#: separates a distractor diagram's id from its node id
SEP = "::"


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` estimated as characters / 4 (rounded up), the usual figure for English BPE.

    >>> estimate_tokens(""), estimate_tokens("Auth Service -> Users DB"), estimate_tokens("x" * 4000)
    (0, 6, 1000)
    """
    return math.ceil(len(text) / 4)


def place(evidence: list[str], distractors: list[str], position: str) -> list[str]:
    """The evidence block put at the start, the middle or the end of the distractor lines.

    >>> place(["E1", "E2"], ["d1", "d2", "d3", "d4"], "middle")
    ['d1', 'd2', 'E1', 'E2', 'd3', 'd4']
    >>> place(["E"], ["d1", "d2"], "start"), place(["E"], ["d1", "d2"], "end")
    (['E', 'd1', 'd2'], ['d1', 'd2', 'E'])
    """
    if position not in POSITIONS:
        raise ValueError(f"position must be one of {', '.join(POSITIONS)}, got {position!r}")
    cut = {"start": 0, "middle": len(distractors) // 2, "end": len(distractors)}[position]
    return distractors[:cut] + evidence + distractors[cut:]


def far_edges(g: nx.MultiDiGraph, evidence_nodes: set[str], hops: int) -> list[Edge]:
    """Edges of ``g`` whose two ends are more than ``hops`` hops (either direction) from every evidence node.

    >>> from benchmark.graph import build_graph
    >>> g = build_graph({"edges": [{"src": "a", "dst": "b"}, {"src": "b", "dst": "c"}, {"src": "c", "dst": "d"},
    ...                            {"src": "d", "dst": "e"}]})
    >>> [(e.src, e.dst) for e in far_edges(g, {"a"}, 2)], far_edges(g, set(), 2)
    ([('d', 'e')], [])
    """
    seeds = [n for n in evidence_nodes if n in g]
    if not seeds:
        return []
    und = g.to_undirected(as_view=True)
    near: set[str] = set()
    for s in seeds:
        near.update(nx.single_source_shortest_path_length(und, s, cutoff=hops))
    return sorted(e for e in graph_edges(g) if e.src not in near and e.dst not in near)


@dataclass(frozen=True)
class PaddedSubgraph(Subgraph):
    """A selection that brings its own context text (lines in a set order) and the labels of its
    foreign nodes; :func:`benchmark.context.make_context` uses both."""

    context_text: str = ""
    node_attrs: tuple[tuple[str, str], ...] = field(default_factory=tuple)


_POOLS: dict[Path, list[tuple[str, str | None, str, nx.MultiDiGraph]]] = {}


def _folder_graphs(folder: Path) -> list[tuple[str, str | None, str, nx.MultiDiGraph]]:
    """(diagram id, its twin, its language, graph) of every ``.d2`` file in ``folder`` (parsed once per process)."""
    if folder not in _POOLS:
        import yaml

        from benchmark.d2 import parse_file
        from benchmark.graph import build_graph

        out = []
        for p in sorted(folder.glob("*.d2")):
            meta: dict = {}
            ann = folder.parent / "annotations" / f"{p.stem}.yaml"
            if ann.exists():
                try:
                    meta = yaml.safe_load(ann.read_text(encoding="utf-8")) or {}
                except yaml.YAMLError:
                    meta = {}
            meta = meta if isinstance(meta, dict) else {}
            try:
                out.append((p.stem, meta.get("twin"), str(meta.get("language") or "en"), build_graph(parse_file(p))))
            except Exception:  # a diagram that does not parse is no distractor; validate reports it
                continue
        _POOLS[folder] = out
    return _POOLS[folder]


@SELECTORS.register("long", pattern=r"long(?P<kilotokens>\d+)k-(?P<position>start|middle|end)-(?P<base>.+)")
class LongContextSelector:
    """The base selection buried in distractor edges (other diagrams, far regions) at a set position and length."""

    def __init__(self, kilotokens: int = 4, position: str = "middle", base: str = "oracle", seed: int = 0,
                 far_hops: int = 2) -> None:
        if kilotokens < 1:
            raise ValueError(f"long context needs at least 1k tokens, got {kilotokens}k")
        if position not in POSITIONS:
            raise ValueError(f"position must be one of {', '.join(POSITIONS)}, got {position!r}")
        if str(base).startswith("long"):
            raise ValueError("a long context cannot wrap another long context")
        self.base = SELECTORS.create(str(base))
        self.kilotokens, self.position, self.seed, self.far_hops = kilotokens, position, seed, far_hops
        self.name = f"long{kilotokens}k-{position}-{base}"
        self._foreign_cache: dict[tuple[Path, str, frozenset[str]], list[tuple[Edge, str, tuple]]] = {}

    def distractors(self, question, graph: nx.MultiDiGraph, diagram, evidence: Subgraph) -> list[tuple[Edge, str, tuple]]:
        """Every candidate distractor (edge, line, labels of its foreign ends) in this question's seeded order."""
        pool: list[tuple[Edge, str, tuple]] = []
        taken = {e.key(with_label=True) for e in evidence.edges}
        for e in far_edges(graph, set(evidence.all_nodes), self.far_hops):
            if e.key(with_label=True) not in taken:
                pool.append((e, edge_line(graph, e), ()))
        if getattr(question, "type", None) not in WHOLE_DIAGRAM_TYPES:
            pool += self._foreign(graph, diagram)
        pool.sort(key=lambda p: (p[1], p[0]))   # a fixed order before the seeded shuffle
        random.Random(f"{self.seed}:{question.id}").shuffle(pool)
        return pool

    def recombined(self, question, foreign: list[tuple[Edge, str, tuple]]) -> Iterator[tuple[Edge, str, tuple]]:
        """Distractor edges joining foreign nodes of two different diagrams, in a seeded order, each pair once.

        ``foreign`` is the real foreign pool (:meth:`_foreign`): its ends are the nodes used, its edge
        labels the labels used. No line repeats a real foreign line or an earlier recombined one. The
        sequence goes on while new pairs exist; it depends on the seed and the question only, so a
        longer context extends a shorter one.
        """
        ends = sorted({lab for _, _, labels in foreign for lab in labels})
        labels = sorted({e.label for e, _, _ in foreign})
        if len({n.split(SEP)[0] for n, _ in ends}) < 2:
            return
        rng = random.Random(f"{self.seed}:{question.id}:recombined")
        seen: set[tuple[str, str]] = set()
        lines = {line for _, line, _ in foreign}   # a line never repeats a real one, nor an earlier one
        misses = 0
        while misses < 1000:
            (a, la), (b, lb) = rng.choice(ends), rng.choice(ends)
            label = rng.choice(labels)
            line = f"{la} -> {lb}" + (f" [{' '.join(label.split())}]" if label.strip() else "")
            if a.split(SEP)[0] == b.split(SEP)[0] or (a, b) in seen or line in lines:
                misses += 1
                continue
            misses = 0
            seen.add((a, b))
            lines.add(line)
            yield Edge(a, b, label, True), line, ((a, la), (b, lb))

    def _foreign(self, graph: nx.MultiDiGraph, diagram) -> list[tuple[Edge, str, tuple]]:
        """The other diagrams' candidate edges for ``diagram`` (computed once per diagram)."""
        path = getattr(diagram, "d2_path", None)
        if path is None:
            return []
        own_labels = frozenset(" ".join(node_label(graph, n).split()).casefold() for n in graph.nodes)
        key = (Path(path).parent, diagram.id, own_labels)   # the graph source (d2, ocr) may label nodes apart
        if key in self._foreign_cache:
            return self._foreign_cache[key]
        pool: list[tuple[Edge, str, tuple]] = []
        language = getattr(diagram, "language", "en") or "en"
        for other, twin, lang, og in _folder_graphs(Path(path).parent):
            if other == diagram.id or other == getattr(diagram, "twin", None) or twin == diagram.id or lang != language:
                continue
            for e in graph_edges(og):
                ends = (node_label(og, e.src), node_label(og, e.dst))
                if any(" ".join(x.split()).casefold() in own_labels for x in ends):
                    continue
                moved = Edge(f"{other}{SEP}{e.src}", f"{other}{SEP}{e.dst}", e.label, e.directed)
                pool.append((moved, edge_line(og, e), ((moved.src, " ".join(ends[0].split())),
                                                       (moved.dst, " ".join(ends[1].split())))))
        self._foreign_cache[key] = pool
        return pool

    def select(self, question, graph, diagram) -> Subgraph:
        from benchmark.context import context_text

        evidence = self.base.select(question, graph, diagram)
        ev_text = context_text(evidence, graph)
        ev_lines = ev_text.split("\n") if ev_text else []
        budget = self.kilotokens * 1000
        used = len(ev_text)
        chosen: list[Edge] = []
        lines: list[str] = []
        attrs: dict[str, str] = {}
        real = self.distractors(question, graph, diagram, evidence)
        whole = getattr(question, "type", None) in WHOLE_DIAGRAM_TYPES   # no foreign edges, real or recombined
        more = iter(()) if whole else self.recombined(question, self._foreign(graph, diagram))
        for e, line, labels in itertools.chain(real, more):
            if math.ceil(used / 4) >= budget:
                break
            chosen.append(e)
            lines.append(line)
            attrs.update(labels)
            used += len(line) + 1
        lines = place(ev_lines, lines, self.position)
        edges = evidence.edges | set(chosen)
        return PaddedSubgraph(evidence.all_nodes | {n for e in chosen for n in (e.src, e.dst)}, frozenset(edges),
                              context_text="\n".join(lines), node_attrs=tuple(sorted(attrs.items())))
