"""Subgraph selectors: which part of a diagram's graph reaches the answerer for a question.

Every selector is one class in one module, registered by name in
:data:`benchmark.stages.SELECTORS`, with ``select(question, graph, diagram) -> Subgraph``
(``graph`` is the flow view from the graph source; ``diagram`` gives ``.id`` and ``.source``):

=================  ==============================================================  ===============
name               selects                                                         module
=================  ==============================================================  ===============
``none``           nothing                                                         :mod:`.none`
``full``           the whole graph                                                 :mod:`.full`
``oracle``         the gold certificate, as far as the graph holds it              :mod:`.oracle`
``khop<k>``        the k-hop neighbourhood of the mentioned nodes                  :mod:`.khop`
``path``           shortest paths among the mentioned nodes                        :mod:`.path`
``bm25-<k>``       the k edges whose text best matches the question (BM25)         :mod:`.bm25`
``dense-<k>``      the k edges closest to the question in MiniLM space             :mod:`.dense`
``d2chunks-<k>``   the k best windows of D2 source lines, re-parsed                :mod:`.d2chunks`
=================  ==============================================================  ===============

``long<n>k-<position>-<base>`` (:mod:`.longctx`) wraps another: the ``base`` selector's choice buried
in about n·1000 tokens of distractor edges, at the start, middle or end (a long-context probe).

Helpers: :mod:`.linking` (question words -> mentioned node ids), :mod:`.text` (folding,
stemming, edges as text), :mod:`.cache` (per-diagram indexes). Only ``oracle`` reads a
question's certificate; no selector reads its answer. Every selector is deterministic: ties are
broken by sorted ids.
"""
