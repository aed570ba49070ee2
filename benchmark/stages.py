"""The pipeline's stage protocols and their registries (DESIGN.md §2).

A retriever *variant* is one choice per stage, named ``finder+source+selector``
(``oracle+d2+khop2``). Each stage is a small object behind one protocol, registered by name
in the registry below; a new variant is one new class in one file plus its tests.

* :data:`FINDERS`   -- find the diagram a question is about (``oracle``, ``clip``, ``ocr-bm25`` ...)
* :data:`SOURCES`   -- get a diagram's graph (``d2`` parser, ``ocr`` extractor)
* :data:`SELECTORS` -- select the subgraph a question needs (``retrievers/``)
* :data:`ANSWERERS` -- answer from the selected context (``solver``, ``keyword``, ``blind``, ``llm``)
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from benchmark.registry import Registry

if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx

    from benchmark.dataset import Dataset, Diagram
    from benchmark.graph import Subgraph
    from benchmark.questions import Question


@runtime_checkable
class Finder(Protocol):
    """Ranks the dataset's diagrams for a question. ``fit`` builds the index once per dataset."""

    name: str

    def fit(self, dataset: "Dataset") -> None: ...

    def rank(self, question: "Question") -> list[tuple[str, float]]:
        """(diagram id, score), best first: the dataset's diagrams, or the first of them in that order (a
        diagram left out ranks below every one listed, and a question whose own diagram is left out is not
        found: a finder lists at least the diagrams it can tell apart from the rest). A finder may also have
        ``rank_many(questions)``, the same rankings for many questions at once (one embedding batch; a
        sequence, which may make each ranking when it is read, or any iterable):
        the run and ``diagqa find --eval`` call it when it is there."""
        ...


@runtime_checkable
class GraphSource(Protocol):
    """Recovers a diagram's graph (flow view). Node ids are the D2 ids where they can be aligned.

    A source that reads the diagram's image says so with ``reads_image = True`` (its graphs cost an
    extraction each); the graphs of the others are made from what the run holds already."""

    name: str

    def load(self, diagram: "Diagram") -> "nx.MultiDiGraph": ...


@runtime_checkable
class Selector(Protocol):
    """Chooses the subgraph of ``graph`` that goes to the answerer for ``question``.

    A selector whose subgraph depends on its inputs alone may say so with ``deterministic = True``: the
    run then selects once per question for variants that give it the same graph (same source, same
    diagram found), and each such sample records the seconds that one selection took.

    A selector may also have ``prepare(graphs)``, given ``(diagram, graph)`` pairs before any question:
    work its selections share over many diagrams, done at once (``dense-<k>`` embeds every graph's
    texts in one batch, into the embedding cache its selections read). The run calls it in its own
    process, before the samples are made, with every diagram's graph from each source the selector is
    paired with that reads no image (:class:`GraphSource`), and records the seconds it took; the
    selections must not depend on whether it was called."""

    name: str

    def select(self, question: "Question", graph: "nx.MultiDiGraph", diagram: "Diagram") -> "Subgraph": ...


@runtime_checkable
class Answerer(Protocol):
    """Answers a question from a context; see :mod:`benchmark.answerers`.

    An answerer whose answer depends on the question and context alone (no model that samples, no
    outside state) may say so with ``deterministic = True``: the run then answers once per question and
    context (the same context reached by several variants), and each such sample records that answer
    and the seconds it took."""

    name: str

    def answer(self, question: "Question", context: Any) -> Any: ...


FINDERS: Registry[Finder] = Registry("finder")
SOURCES: Registry[GraphSource] = Registry("graph source")
SELECTORS: Registry[Selector] = Registry("selector")
ANSWERERS: Registry[Answerer] = Registry("answerer")
