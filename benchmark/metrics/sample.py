"""Every metric of one sample as one flat, JSON-ready dict (what ``samples.jsonl`` stores).

Re-scoring calls :func:`score_sample` again on the stored question, retrieved subgraph, context
and answer; nothing here calls an answerer. Values that cannot be measured are ``None`` with a
``*_reason`` saying why.

>>> from benchmark.answers import Answer
>>> from benchmark.context import make_context
>>> from benchmark.graph import Edge, Subgraph, build_graph
>>> from benchmark.questions import Question
>>> g = build_graph({"nodes": [{"id": n} for n in ("User", "Auth", "DB")],
...                  "edges": [{"src": "User", "dst": "Auth"}, {"src": "Auth", "dst": "DB"},
...                            {"src": "User", "dst": "DB"}]})
>>> q = Question("q", "d", "Can User reach DB?", "reachable", (("source", "User"), ("target", "DB")), True,
...              Subgraph.from_edges([Edge("User", "DB")]))
>>> r = Subgraph.from_edges([Edge("User", "Auth"), Edge("Auth", "DB")])
>>> ctx = make_context("d", r, g)
>>> s = score_sample(q, g, r, ctx, Answer("solver", "Yes", evidence=(("User", "Auth"), ("Auth", "DB"))))
>>> s["srr"], s["node_srr"], s["sufficient"], s["correct"], s["faithfulness"], s["guess_class"]
(0.0, 1.0, True, True, 1.0, 'grounded')
>>> [c["verdict"] for c in s["claims"]]
['supported', 'supported']

The blind answerer receives nothing: never grounded, whatever was selected for the others.

>>> s = score_sample(q, g, r, make_context("d", Subgraph(), g), Answer("blind", "yes"))
>>> s["sufficient"], s["srr"], s["f1"], s["guess_class"]
(False, 0.0, 0.0, 'lucky_guess')
"""
from __future__ import annotations

from typing import Any

import networkx as nx

from benchmark.answers import Answer
from benchmark.graph import Subgraph
from benchmark.metrics.abstention import error_kind, is_abstention
from benchmark.metrics.accuracy import normalise_with_reason
from benchmark.metrics.claims import extract_claims
from benchmark.metrics.evidence import cite_edges, evidence_scores
from benchmark.metrics.faithfulness import faithfulness
from benchmark.metrics.guess import guess_class
from benchmark.metrics.overlap import best_overlap
from benchmark.metrics.sufficiency import align_edges
from benchmark.questions import Question, answer_to_json
from benchmark.solver import LABEL_TYPES, answers_match, closures, proves, resolve_certificate, valid_certificates


def gold_subgraph(question: Question, diagram_graph: nx.MultiDiGraph) -> Subgraph:
    """The question's certificate with its edges matched to the diagram's (direction, label)."""
    cert, _ = resolve_certificate(question.certificate, diagram_graph)
    return cert if not cert.is_empty() or question.certificate.is_empty() else question.certificate


def gold_certificates(question: Question, diagram_graph: nx.MultiDiGraph) -> list[Subgraph]:
    """Every valid certificate of the question: the annotated one (resolved) first, then the other
    shortest witness paths, or routes of a path question (:func:`benchmark.solver.valid_certificates`)."""
    return valid_certificates(question.type, question.arg, question.answer, gold_subgraph(question, diagram_graph),
                              diagram_graph)


def gold_closures(question: Question, diagram_graph: nx.MultiDiGraph) -> list[Subgraph]:
    """The closed sets a context must contain to prove the question's gold answer (:func:`benchmark.solver.closures`;
    ``[]`` when none is needed): what :func:`benchmark.solver.proves` checks every context against."""
    return closures(question.type, question.arg, question.answer, diagram_graph)


def score_context(question: Question, diagram_graph: nx.MultiDiGraph, received: Subgraph,
                  gold: Subgraph | list[Subgraph] | None = None,
                  needed: list[Subgraph] | None = None) -> dict[str, Any]:
    """The metrics that depend on the context alone (overlap, sizes, sufficiency).

    ``received`` is the subgraph that reached the answerer, as it reached it (empty for an answerer
    that gets no context). They are the same for every answerer that received this context, so
    callers scoring several answers of one context compute them once and pass them to
    :func:`score_sample`; callers scoring many contexts of one question may pass its
    :func:`gold_certificates` (or one certificate) as ``gold``, and its
    :func:`gold_closures` as ``needed``.

    * ``srr``, ``precision``, ``f1`` (edges; labels count for label questions only) and ``node_srr``,
      ``node_precision`` against the valid certificate that best matches the context
      (``certificate_index``: 0 the annotated one);
    * ``sufficient``: the context *as given* proves the gold answer (never for an empty context);
    * ``sufficient_if_aligned``: whether it would once its edges are aligned to the diagram's
      (direction, label) -- ``None`` when alignment changes nothing; an extraction error shows here.
    """
    out: dict[str, Any] = {}
    if gold is None:
        gold = gold_certificates(question, diagram_graph)
    certs = gold if isinstance(gold, list) else [gold]
    o, index = best_overlap(received, certs, with_label=question.type in LABEL_TYPES)
    out.update(o.to_dict())
    out["certificate_index"] = index
    out["retrieved_nodes"], out["retrieved_edges"] = len(received.all_nodes), len(received.edges)
    best = certs[index]
    out["gold_nodes"], out["gold_edges"] = len(best.all_nodes), len(best.edges)
    if needed is None and not received.is_empty():   # the same for both proofs below
        needed = gold_closures(question, diagram_graph)
    sufficient = (not received.is_empty()
                  and proves(question.type, question.arg, question.answer, received, diagram_graph, needed))
    out["sufficient"] = sufficient  # is_sufficient
    repaired = None
    if not sufficient and not received.is_empty():
        aligned = align_edges(received, diagram_graph)
        if aligned != received:
            repaired = proves(question.type, question.arg, question.answer, aligned, diagram_graph, needed)
    out["sufficient_if_aligned"] = repaired
    return out


def score_answer(question: Question, diagram_graph: nx.MultiDiGraph, answer: Answer,
                 kind: str | None = None) -> tuple[dict[str, Any], list]:
    """The metrics that depend on the answer alone (its normalised value, correctness, abstention,
    error) and the claims it states. They are the same wherever the same answer was given to the
    same question, so callers scoring many samples may compute them once and pass them to
    :func:`score_sample`. ``kind`` is the answerer's own error kind, when it gave one.

    An error is unmeasured (``correct: None``, ``error`` its kind); an abstention is not correct
    (``correct: False``, ``abstained: True``) -- except on an ``absent`` question, whose right answer
    it is (``correct: True``, ``abstained: True``); any other answer to that question is wrong."""
    abstained = is_abstention(answer)
    error = None
    if abstained:
        value, reason = None, "abstained"
    elif answer.error:
        value, reason = None, f"answerer error: {answer.error}"
        error = error_kind(answer.error, kind or getattr(answer, "error_kind", None))
    else:
        value, reason = normalise_with_reason(question.kind, answer.raw, diagram_graph, question.language)
        abstained = value is None and is_abstention(answer, value)
        if abstained:
            reason = "abstained"
    if question.kind == "abstain":  # about something the diagram lacks: abstaining is the right answer
        abstained = abstained or value == question.answer
        reason = "abstained" if abstained else reason
        correct = None if error else abstained
    else:
        correct = None if error else (False if abstained else
                                      answers_match(question.type, question.arg, value, question.answer, diagram_graph))
    out = {"answer_value": answer_to_json(value), "answer_reason": reason, "correct": correct,
           "correct_reason": f"answerer error ({error})" if error else None,
           "abstained": abstained, "error": error}
    # evidence attribution: the cited edges on the diagram against the gold certificate (text or image input)
    out.update(evidence_scores(cite_edges(answer.evidence, diagram_graph), gold_subgraph(question, diagram_graph)))
    return out, extract_claims(answer, diagram_graph)


def score_sample(question: Question, diagram_graph: nx.MultiDiGraph, retrieved: Subgraph,
                 context: Any, answer: Answer, context_metrics: dict[str, Any] | None = None,
                 answer_metrics: tuple[dict[str, Any], list] | None = None) -> dict[str, Any]:
    """Overlap, sufficiency, accuracy, abstention, faithfulness, guess class of one sample.

    ``context`` is the :class:`benchmark.context.Context` the answerer received (its ``subgraph``
    is what every metric is judged on), or ``None`` when it received none; ``retrieved`` is used
    only when ``context`` is ``None`` and a context was nonetheless selected -- it is then *not*
    what reached the answerer, so an empty subgraph is scored. ``context_metrics`` and
    ``answer_metrics``, when given, are :func:`score_context` of the same question and received
    context and :func:`score_answer` of the same question and answer."""
    ctx_sub = getattr(context, "subgraph", None)
    received = ctx_sub if ctx_sub is not None else Subgraph()
    out = dict(context_metrics) if context_metrics is not None else score_context(question, diagram_graph, received)
    values, claims = answer_metrics if answer_metrics is not None else score_answer(question, diagram_graph, answer)
    out.update(values)

    f = faithfulness(claims, received, diagram_graph, getattr(context, "graph", None))
    out["faithfulness"] = f.score
    out["claims_supported"], out["claims_unsupported"], out["claims_fabricated"] = f.supported, f.unsupported, f.fabricated
    out["n_claims"] = f.n_claims
    out["faithfulness_reason"] = None if claims else "the answer states no claims"
    out["claims"] = [dict(c.to_json(), verdict=v) for c, v in zip(claims, f.verdicts)]
    out["guess_class"] = guess_class(out["correct"], out["sufficient"], abstained=bool(out.get("abstained")),
                                     error=out.get("error"), extraction=bool(out.get("sufficient_if_aligned")))
    return out
