"""``none``: the empty context. The answerer sees nothing of the diagram (a lower bound)."""
from __future__ import annotations

from benchmark.graph import Subgraph
from benchmark.stages import SELECTORS


@SELECTORS.register("none")
class NoneSelector:
    """Empty context: nothing of the diagram reaches the answerer."""

    name = "none"
    #: its result depends on its inputs alone: the run makes it once for samples that give it the same inputs
    deterministic = True

    def select(self, question, graph, diagram) -> Subgraph:
        return Subgraph()
