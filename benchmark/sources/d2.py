"""Graph source ``d2``: the graph the project's D2 parser reads from the diagram's source text."""
from __future__ import annotations

import networkx as nx

from benchmark.dataset import Diagram
from benchmark.stages import SOURCES


@SOURCES.register("d2")
class D2Source:
    """The D2 parser's graph of the diagram (node ids are D2 ids)."""

    name = "d2"

    def load(self, diagram: Diagram) -> nx.MultiDiGraph:
        return diagram.graph
