"""``full``: the whole graph. Everything reaches the answerer (recall 1, low precision)."""
from __future__ import annotations

from benchmark.graph import Subgraph, whole
from benchmark.stages import SELECTORS


@SELECTORS.register("full")
class FullSelector:
    """Whole graph: every node and edge of the diagram."""

    name = "full"
    #: its result depends on its inputs alone: the run makes it once for samples that give it the same inputs
    deterministic = True

    def select(self, question, graph, diagram) -> Subgraph:
        return whole(graph)
