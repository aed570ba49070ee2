"""``oracle``: the question's gold certificate, as far as the graph holds it.

The certificate is resolved against ``graph`` with :func:`benchmark.solver.resolve_certificate`:
edge direction and labels come from the graph, and parts the graph lacks (an OCR graph that
missed a node or an arrow) are left out. This is the only selector that reads the certificate.
"""
from __future__ import annotations

from benchmark.graph import Subgraph
from benchmark.solver import resolve_certificate
from benchmark.stages import SELECTORS


@SELECTORS.register("oracle")
class OracleSelector:
    """Gold certificate, limited to what the graph holds (upper bound of retrieval)."""

    name = "oracle"
    #: its result depends on its inputs alone: the run makes it once for samples that give it the same inputs
    deterministic = True

    def select(self, question, graph, diagram) -> Subgraph:
        resolved, _missing = resolve_certificate(question.certificate, graph)
        return resolved.normalized()
