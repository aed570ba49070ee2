"""The decision rules: ACCEPT / REVIEW / REJECT for one answer, from graph and text signals.

Rules run in a fixed order and the first that fires decides. The graph rules come first because
they are exact (they are checked against the diagram, not estimated from text); the text rules
then decide what the graph cannot (and decide alone for a free-text answer with no graph signals):

====  =====================================================  =======  ==============================
rule  fires when                                             verdict  next action
====  =====================================================  =======  ==============================
G1    the answerer failed (no answer to judge)               REJECT   retry the call
G2    a cited edge is not in the diagram                     REJECT   regenerate with a grounding prompt
G3    a cited edge is not in the context                     REJECT   regenerate with a grounding prompt
G4    the answer abstains                                    REVIEW   retrieve more (insufficient
                                                                      context) / grounding prompt
G5    the context is insufficient, an answer given anyway    REVIEW   retrieve more
G6    sufficient context and every claim supported           ACCEPT   serve
T1    attribution < 0.35 and vague (specificity < 0.50)      REVIEW   retry with a more specific prompt
T2    attribution < 0.35 and specific                        REJECT   regenerate with a grounding prompt
T3    attribution < 0.45 and specificity > 0.60              REJECT   regenerate with a grounding prompt
T4    context quality < 0.40                                 REVIEW   retrieve more
T5    attribution < 0.55 and context quality < 0.50          REJECT   retrieve more
T6    attribution < 0.55                                     REVIEW   human review
T7    relevance < 0.30                                       REVIEW   retry with a more specific prompt
T8    disagreement > 0.12                                    REVIEW   human review
T9    composite < 0.65                                       REVIEW   human review
—     otherwise                                              ACCEPT   serve
====  =====================================================  =======  ==============================

(thresholds: :class:`~benchmark.decision.config.DecisionConfig`). A confident wrong answer is
worse than a vague one: T2 rejects what T1 only sends to review.

**Confidence**: a graph rule gives ``graph_confidence`` (0.95); a text rule gives
0.5 + the smallest distance of a deciding signal from its threshold, capped at 1 — a decision
taken on a signal just past its threshold is a coin toss. A decision is ``uncertain`` when its
composite lies in ``[uncertain_low, uncertain_high)`` (0.45–0.65): the cases an external judge
should see.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchmark.decision.config import DecisionConfig
from benchmark.decision.signals import TextSignals

ACCEPT, REVIEW, REJECT = "ACCEPT", "REVIEW", "REJECT"
VERDICTS = (ACCEPT, REVIEW, REJECT)

SERVE = "serve"
RETRY = "retry the call"
SPECIFIC_PROMPT = "retry with a more specific prompt"
GROUNDING_PROMPT = "regenerate with a grounding prompt"
RETRIEVE_MORE = "retrieve more"
HUMAN = "human review"


@dataclass(frozen=True)
class GraphSignals:
    """What the harness measured against the diagram for one answer (None = not measured)."""

    error: str | None = None
    abstained: bool | None = None
    sufficient: bool | None = None
    srr: float | None = None
    faithfulness: float | None = None
    n_claims: int | None = None
    unsupported: int | None = None
    fabricated: int | None = None

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> "GraphSignals":
        """The graph signals of a sample record (``metrics`` keys of the shared record contract)."""
        m = rec.get("metrics") or {}
        ans = rec.get("answer") or {}
        err = rec.get("error")
        error, abstained = None, m.get("abstained")
        if err:
            error = (err.get("stage") or "stage") + "_error" if isinstance(err, dict) else str(err)
        elif rec.get("answer") is None:
            error = "no_answer"
        elif "error" in m or "abstained" in m:  # the record contract: metrics say error or abstention
            error = str(m["error"]) if m.get("error") else None
        elif ans.get("error"):  # older records: a failed answer with a measured correctness is an abstention
            if m.get("correct") is None:
                error = "answer_error"
            else:
                abstained = True
        return cls(error=error, abstained=abstained, sufficient=m.get("sufficient"), srr=m.get("srr"),
                   faithfulness=m.get("faithfulness"), n_claims=m.get("n_claims"),
                   unsupported=m.get("claims_unsupported"), fabricated=m.get("claims_fabricated"))


@dataclass(frozen=True)
class Decision:
    """The verdict on one answer, why, and what to do next."""

    verdict: str
    rule: str
    failure: str | None
    reason: str
    action: str
    confidence: float
    uncertain: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "rule": self.rule, "failure": self.failure, "reason": self.reason,
                "action": self.action, "confidence": round(self.confidence, 4), "uncertain": self.uncertain}


def margin_confidence(*margins: float) -> float:
    """0.5 + the smallest margin (distance from a threshold), within [0.5, 1].

    >>> margin_confidence(0.2, 0.05), margin_confidence(0.9), margin_confidence()
    (0.55, 1.0, 0.5)
    """
    if not margins:
        return 0.5
    return min(1.0, 0.5 + max(0.0, min(abs(m) for m in margins)))


def graph_decision(g: GraphSignals, cfg: DecisionConfig) -> Decision | None:
    """The first graph rule (G1-G6) that fires, or None.

    >>> cfg = DecisionConfig()
    >>> graph_decision(GraphSignals(n_claims=2, unsupported=1, fabricated=0, sufficient=True), cfg).rule
    'G3'
    >>> graph_decision(GraphSignals(n_claims=2, unsupported=0, fabricated=0, sufficient=True), cfg).verdict
    'ACCEPT'
    >>> graph_decision(GraphSignals(n_claims=0, sufficient=True), cfg) is None
    True
    """
    c = cfg.graph_confidence
    if g.error:
        return Decision(REJECT, "G1", "answerer_error", f"no answer to judge ({g.error})", RETRY, c)
    if g.fabricated:
        return Decision(REJECT, "G2", "fabricated_citation",
                        f"{g.fabricated} cited edge(s) not in the diagram", GROUNDING_PROMPT, c)
    if g.unsupported:
        return Decision(REJECT, "G3", "unfaithful_citation",
                        f"{g.unsupported} cited edge(s) not in the context", GROUNDING_PROMPT, c)
    if g.abstained:
        if g.sufficient is False:
            return Decision(REVIEW, "G4", "abstained", "abstained on an insufficient context", RETRIEVE_MORE, c)
        return Decision(REVIEW, "G4", "abstained_on_sufficient_context",
                        "abstained although the context determines the answer", GROUNDING_PROMPT, c)
    if g.sufficient is False:
        return Decision(REVIEW, "G5", "insufficient_context",
                        "answered although the context does not determine the answer", RETRIEVE_MORE, c)
    if g.sufficient and g.n_claims and not g.unsupported and not g.fabricated:
        return Decision(ACCEPT, "G6", None, "sufficient context and every claim supported by it", SERVE, c)
    return None


def text_decision(t: TextSignals, cfg: DecisionConfig) -> Decision:
    """The first text rule (T1-T9) that fires, else ACCEPT.

    >>> cfg = DecisionConfig()
    >>> def sig(attr, spec, quality=0.9, rel=0.9, dis=0.0):
    ...     return TextSignals(semantic=attr, overlap=attr, attribution=attr, specificity=spec,
    ...                        composite=0.7 * attr + 0.3 * spec, relevance=rel, context_quality=quality,
    ...                        disagreement=dis)
    >>> [text_decision(sig(0.2, s), cfg).verdict for s in (0.3, 0.8)]   # vague vs confident
    ['REVIEW', 'REJECT']
    >>> text_decision(sig(0.9, 0.9), cfg).verdict, text_decision(sig(0.9, 0.9, dis=0.2), cfg).rule
    ('ACCEPT', 'T8')
    """
    a, s, q = t.attribution, t.specificity, t.context_quality
    if a < cfg.attribution_hallucination and s < cfg.vague_below:
        d = (REVIEW, "T1", "vague_unattributed", f"attribution {a:.2f} < {cfg.attribution_hallucination} and vague "
             f"(specificity {s:.2f})", SPECIFIC_PROMPT, (a - cfg.attribution_hallucination, s - cfg.vague_below))
    elif a < cfg.attribution_hallucination:
        d = (REJECT, "T2", "confident_hallucination", f"attribution {a:.2f} < {cfg.attribution_hallucination} and "
             f"specific (specificity {s:.2f})", GROUNDING_PROMPT, (a - cfg.attribution_hallucination, s - cfg.vague_below))
    elif a < cfg.attribution_weak and s > cfg.specific_above:
        d = (REJECT, "T3", "specific_weakly_attributed", f"attribution {a:.2f} < {cfg.attribution_weak} and "
             f"specificity {s:.2f} > {cfg.specific_above}", GROUNDING_PROMPT,
             (a - cfg.attribution_weak, s - cfg.specific_above))
    elif q < cfg.context_quality_low:
        d = (REVIEW, "T4", "poor_context", f"context quality {q:.2f} < {cfg.context_quality_low}", RETRIEVE_MORE,
             (q - cfg.context_quality_low,))
    elif a < cfg.attribution_low and q < cfg.context_quality_weak:
        d = (REJECT, "T5", "two_weak_signals", f"attribution {a:.2f} < {cfg.attribution_low} and context quality "
             f"{q:.2f} < {cfg.context_quality_weak}", RETRIEVE_MORE, (a - cfg.attribution_low, q - cfg.context_quality_weak))
    elif a < cfg.attribution_low:
        d = (REVIEW, "T6", "weak_attribution", f"attribution {a:.2f} < {cfg.attribution_low}", HUMAN,
             (a - cfg.attribution_low,))
    elif t.relevance < cfg.relevance_low:
        d = (REVIEW, "T7", "off_topic", f"relevance {t.relevance:.2f} < {cfg.relevance_low}", SPECIFIC_PROMPT,
             (t.relevance - cfg.relevance_low,))
    elif t.disagreement > cfg.disagreement_high:
        d = (REVIEW, "T8", "scorer_disagreement", f"disagreement {t.disagreement:.2f} > {cfg.disagreement_high}",
             HUMAN, (t.disagreement - cfg.disagreement_high,))
    elif t.composite < cfg.composite_accept:
        d = (REVIEW, "T9", "low_composite", f"composite {t.composite:.2f} < {cfg.composite_accept}", HUMAN,
             (t.composite - cfg.composite_accept,))
    else:
        d = (ACCEPT, "accept", None, f"composite {t.composite:.2f} >= {cfg.composite_accept}, no rule fired", SERVE,
             (a - cfg.attribution_low, q - cfg.context_quality_low, t.relevance - cfg.relevance_low,
              cfg.disagreement_high - t.disagreement, t.composite - cfg.composite_accept))
    verdict, rule, failure, reason, action, margins = d
    return Decision(verdict, rule, failure, reason, action, margin_confidence(*margins))


def is_uncertain(t: TextSignals, cfg: DecisionConfig) -> bool:
    """Composite inside the uncertainty window ``[uncertain_low, uncertain_high)``."""
    return cfg.uncertain_low <= t.composite < cfg.uncertain_high


def decide(text: TextSignals, graph: GraphSignals | None = None, cfg: DecisionConfig | None = None) -> Decision:
    """The decision on one answer: graph rules first (when ``cfg.use_graph`` and ``graph`` is given),
    then the text rules.

    >>> t = TextSignals(0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.0)
    >>> decide(t).verdict, decide(t, GraphSignals(n_claims=1, unsupported=1)).verdict
    ('ACCEPT', 'REJECT')
    """
    cfg = cfg or DecisionConfig()
    d = graph_decision(graph, cfg) if (graph is not None and cfg.use_graph) else None
    if d is None:
        d = text_decision(text, cfg)
    unc = is_uncertain(text, cfg)
    return d if d.uncertain == unc else Decision(d.verdict, d.rule, d.failure, d.reason, d.action, d.confidence, unc)
