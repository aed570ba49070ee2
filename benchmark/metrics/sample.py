"""Every metric of one sample as one flat, JSON-ready dict (what ``samples.jsonl`` stores).

Re-scoring calls :func:`score_sample` again on the stored question, retrieved subgraph, context
and answer; nothing here calls an answerer. Values that cannot be measured are ``None`` with a
``*_reason`` saying why.

>>> from benchmark.answers import Answer
>>> from benchmark.graph import Edge, Subgraph, build_graph
>>> from benchmark.questions import Question
>>> g = build_graph({"nodes": [{"id": n} for n in ("User", "Auth", "DB")],
...                  "edges": [{"src": "User", "dst": "Auth"}, {"src": "Auth", "dst": "DB"},
...                            {"src": "User", "dst": "DB"}]})
>>> q = Question("q", "d", "Can User reach DB?", "reachable", (("source", "User"), ("target", "DB")), True,
...              Subgraph.from_edges([Edge("User", "DB")]))
>>> r = Subgraph.from_edges([Edge("User", "Auth"), Edge("Auth", "DB")])
>>> s = score_sample(q, g, r, None, Answer("solver", "Yes", evidence=(("User", "Auth"), ("Auth", "DB"))))
>>> round(s["srr"], 2), s["precision"], s["sufficient"], s["correct"], s["faithfulness"], s["guess_class"]
(0.67, 0.4, True, True, 0.0, 'grounded')
>>> [c["verdict"] for c in s["claims"]]
['unsupported', 'unsupported']
"""
from __future__ import annotations

from typing import Any

import networkx as nx

from benchmark.answers import Answer
from benchmark.graph import Subgraph
from benchmark.metrics.accuracy import normalise_with_reason
from benchmark.metrics.claims import extract_claims
from benchmark.metrics.evidence import cite_edges, evidence_scores
from benchmark.metrics.faithfulness import faithfulness
from benchmark.metrics.guess import guess_class
from benchmark.metrics.overlap import overlap
from benchmark.metrics.sufficiency import align_edges
from benchmark.questions import Question, answer_to_json
from benchmark.solver import answers_match, proves, resolve_certificate


def gold_subgraph(question: Question, diagram_graph: nx.MultiDiGraph) -> Subgraph:
    """The question's certificate with its edges matched to the diagram's (direction, label)."""
    cert, _ = resolve_certificate(question.certificate, diagram_graph)
    return cert if not cert.is_empty() or question.certificate.is_empty() else question.certificate


def score_context(question: Question, diagram_graph: nx.MultiDiGraph, retrieved: Subgraph,
                  gold: Subgraph | None = None) -> dict[str, Any]:
    """The metrics that depend on the retrieved context alone (overlap, sizes, sufficiency).

    They are the same for every answerer that saw this context, so callers scoring several
    answers of one context compute them once and pass them to :func:`score_sample`; callers
    scoring many contexts of one question may pass its :func:`gold_subgraph` as ``gold``.
    """
    out: dict[str, Any] = {}
    if gold is None:
        gold = gold_subgraph(question, diagram_graph)
    aligned = align_edges(retrieved, diagram_graph)
    out.update(overlap(aligned, gold).to_dict())
    out.update(overlap(aligned, gold, with_label=True).to_dict("label_"))
    out["precision_reason"] = "nothing retrieved" if aligned.is_empty() else None
    out["retrieved_nodes"], out["retrieved_edges"] = len(aligned.all_nodes), len(aligned.edges)
    out["gold_nodes"], out["gold_edges"] = len(gold.all_nodes), len(gold.edges)
    out["sufficient"] = proves(question.type, question.arg, question.answer, aligned, diagram_graph)  # is_sufficient
    return out


def score_answer(question: Question, diagram_graph: nx.MultiDiGraph, answer: Answer) -> tuple[dict[str, Any], list]:
    """The metrics that depend on the answer alone (its normalised value, correctness) and the claims
    it states. They are the same wherever the same answer was given to the same question, so callers
    scoring many samples may compute them once and pass them to :func:`score_sample`."""
    if answer.error:
        value, reason = None, f"answerer error: {answer.error}"
    else:
        value, reason = normalise_with_reason(question.kind, answer.raw, diagram_graph, question.language)
    out = {"answer_value": answer_to_json(value), "answer_reason": reason,
           "correct": answers_match(question.type, question.arg, value, question.answer, diagram_graph)}
    # evidence attribution: the cited edges on the diagram against the gold certificate (text or image input)
    out.update(evidence_scores(cite_edges(answer.evidence, diagram_graph), gold_subgraph(question, diagram_graph)))
    return out, extract_claims(answer, diagram_graph)


def score_sample(question: Question, diagram_graph: nx.MultiDiGraph, retrieved: Subgraph,
                 context: Any, answer: Answer, context_metrics: dict[str, Any] | None = None,
                 answer_metrics: tuple[dict[str, Any], list] | None = None) -> dict[str, Any]:
    """Overlap (plain and ``label_``-prefixed label-aware), sufficiency, accuracy, faithfulness,
    guess class; ``context`` is the :class:`benchmark.context.Context` the answerer saw (its
    ``subgraph`` is what claims are checked against), or ``None`` when it saw none.
    ``context_metrics`` and ``answer_metrics``, when given, are :func:`score_context` of the same
    question and context and :func:`score_answer` of the same question and answer."""
    out = dict(context_metrics) if context_metrics is not None else score_context(question, diagram_graph, retrieved)
    values, claims = answer_metrics if answer_metrics is not None else score_answer(question, diagram_graph, answer)
    out.update(values)

    ctx_sub = getattr(context, "subgraph", None)
    f = faithfulness(claims, ctx_sub if ctx_sub is not None else Subgraph(), diagram_graph,
                     getattr(context, "graph", None))
    out["faithfulness"] = f.score
    out["claims_supported"], out["claims_unsupported"], out["claims_fabricated"] = f.supported, f.unsupported, f.fabricated
    out["n_claims"] = f.n_claims
    out["faithfulness_reason"] = None if claims else "the answer states no claims"
    out["claims"] = [dict(c.to_json(), verdict=v) for c, v in zip(claims, f.verdicts)]
    out["guess_class"] = guess_class(out["correct"], out["sufficient"])
    return out
