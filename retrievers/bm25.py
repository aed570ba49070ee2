"""``bm25-<k>``: the k edges whose text best matches the question under BM25.

Each edge is one document, ``"src label -> dst label: edge label"`` (:func:`retrievers.text.edge_text`),
and each node without an edge is one more (its label). Documents and question are tokenised by
:func:`retrievers.text.words` (folded, stemmed, function words of English and Russian dropped)
and scored by Okapi BM25 (``rank_bm25``). Only documents sharing a word with the question are
ranked: by score, then by the number of question words they hold, then by edge (sorted), so equal
scores are broken the same way on every run. The index is built once per diagram graph.
"""
from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
from rank_bm25 import BM25Okapi

from benchmark.graph import Edge, Subgraph, graph_edges
from benchmark.stages import SELECTORS
from retrievers.cache import PerGraph
from retrievers.text import edge_text, label_of, words


@dataclass(frozen=True)
class Doc:
    """One ranked unit: an edge, or a node that has no edge."""

    edge: Edge | None
    node: str | None
    text: str

    def as_subgraph(self) -> Subgraph:
        return Subgraph.from_edges([self.edge]) if self.edge is not None else Subgraph(frozenset({self.node}))


def graph_docs(g: nx.MultiDiGraph) -> list[Doc]:
    """Every edge of ``g`` as text, then every node with no edge (sorted)."""
    edges = sorted(set(graph_edges(g)))
    docs = [Doc(e, None, edge_text(g, e)) for e in edges]
    ends = {e.src for e in edges} | {e.dst for e in edges}
    docs += [Doc(None, str(n), label_of(g, str(n))) for n in sorted(g.nodes, key=str) if n not in ends]
    return docs


class BM25Index:
    """BM25 over a list of documents; :meth:`top` returns the best ``k`` indices."""

    def __init__(self, texts: list[str]) -> None:
        self.tokens = [words(t) for t in texts]
        # rank_bm25 divides by the mean document length: give it one word when all are empty
        self.bm25 = BM25Okapi([t or ["\x00"] for t in self.tokens]) if texts else None

    def top(self, query: str, k: int, order: list | None = None) -> list[int]:
        """Indices of the best ``k`` documents that share a word with ``query``.

        Ties on score go to more distinct shared words, then to ``order`` (default: index).

        >>> BM25Index(["Auth -> Users DB: lookup", "Gateway -> Auth: verify token", "Cache"]).top("verify the token", 5)
        [1]
        """
        q = words(query)
        if self.bm25 is None or not q or k <= 0:
            return []
        scores = self.bm25.get_scores(q)
        qset = set(q)
        hits = [(i, len(qset.intersection(toks))) for i, toks in enumerate(self.tokens)]
        hits = [(i, shared) for i, shared in hits if shared]
        order = order if order is not None else list(range(len(self.tokens)))
        hits.sort(key=lambda h: (-round(float(scores[h[0]]), 9), -h[1], order[h[0]]))
        return [i for i, _ in hits[:k]]


@SELECTORS.register("bm25", pattern=r"bm25-(?P<k>\d+)")
class BM25Selector:
    """Top-k edges by BM25 between the question and each edge's text."""

    #: its result depends on its inputs alone: the run makes it once for samples that give it the same inputs
    deterministic = True

    def __init__(self, k: int = 8) -> None:
        if k < 1:
            raise ValueError(f"bm25 needs k >= 1, got {k}")
        self.k = k
        self.name = f"bm25-{k}"
        self._indexes: PerGraph[tuple[list[Doc], BM25Index]] = PerGraph()

    def _index(self, graph, diagram_id: str) -> tuple[list[Doc], BM25Index]:
        def build():
            docs = graph_docs(graph)
            return docs, BM25Index([d.text for d in docs])
        return self._indexes.get(diagram_id, graph, build)

    def select(self, question, graph, diagram) -> Subgraph:
        docs, index = self._index(graph, diagram.id)
        out = Subgraph()
        for i in index.top(question.text, self.k):
            out = out.union(docs[i].as_subgraph())
        return out
