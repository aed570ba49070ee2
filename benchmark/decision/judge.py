"""The LLM judge in the decision layer: never the default, consulted only where the heuristics are uncertain.

A decision is put to the judge only when all of these hold:

* the configuration has ``use_judge: true`` and a judge was given (``diagqa decide --judge``);
* a *text* rule made it (T1-T9 or the final ACCEPT): the graph rules G1-G6 are exact and are never
  overruled by an estimate;
* its composite lies in the uncertainty window ``[uncertain_low, uncertain_high)`` (default 0.45-0.65).

The judge's row for the sample (:mod:`benchmark.judge.llm_judge`) then decides, first rule first:

====  ==============================================  =======  ==================================
rule  the judge found                                 verdict  next action
====  ==============================================  =======  ==================================
J1    a claim the context contradicts                 REJECT   regenerate with a grounding prompt
J2    a claim the context does not state              REJECT   regenerate with a grounding prompt
J3    claims, every one supported by the context      ACCEPT   serve
====  ==============================================  =======  ==================================

with confidence ``judge_confidence``. Otherwise -- the judge failed, did not judge the sample, or found
no claim -- the heuristic decision stands; :func:`judge_note` records what the judge said either way.

>>> from benchmark.decision.config import DecisionConfig
>>> from benchmark.decision.rules import Decision
>>> cfg = DecisionConfig()
>>> d = Decision("REVIEW", "T9", "low_composite", "composite 0.60 < 0.65", "human review", 0.55, uncertain=True)
>>> needs_judge(d, cfg), needs_judge(Decision("REJECT", "G3", None, "", "", 0.95, uncertain=True), cfg)
(True, False)
>>> row = {"status": "judged", "claims": [{"label": "supported"}, {"label": "not_in_context"}]}
>>> consult(d, row, cfg).rule, consult(d, {"status": "error", "error_kind": "timeout"}, cfg).rule
('J2', 'T9')
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from benchmark.decision.config import DecisionConfig
from benchmark.decision.rules import ACCEPT, GROUNDING_PROMPT, REJECT, SERVE, Decision


def needs_judge(d: Decision, cfg: DecisionConfig) -> bool:
    """Whether the judge is consulted on decision ``d`` (see the module doc)."""
    return bool(cfg.use_judge and d.uncertain and (d.rule.startswith("T") or d.rule == "accept"))


def judge_decision(row: dict[str, Any] | None, cfg: DecisionConfig) -> Decision | None:
    """J1-J3 from a judge row, or None when the judge gives nothing to decide on."""
    if not row or row.get("status") != "judged":
        return None
    labels = Counter(c.get("label") for c in row.get("claims") or ())
    c = cfg.judge_confidence
    if labels["contradicted"]:
        return Decision(REJECT, "J1", "judge_contradicted", f"the judge found {labels['contradicted']} claim(s) the "
                        "context contradicts", GROUNDING_PROMPT, c, uncertain=True)
    if labels["not_in_context"]:
        return Decision(REJECT, "J2", "judge_not_in_context", f"the judge found {labels['not_in_context']} claim(s) "
                        "the context does not state", GROUNDING_PROMPT, c, uncertain=True)
    if labels["supported"]:
        return Decision(ACCEPT, "J3", None, f"the judge found all {labels['supported']} claim(s) supported by the "
                        "context", SERVE, c, uncertain=True)
    return None


def consult(d: Decision, row: dict[str, Any] | None, cfg: DecisionConfig) -> Decision:
    """The judge's decision where it gives one, else ``d`` unchanged."""
    return judge_decision(row, cfg) or d


def judge_note(row: dict[str, Any] | None, heuristic: Decision) -> dict[str, Any]:
    """What a decision row records of a consultation: the judge's status, its labels, and the
    heuristic decision it replaced (or kept).

    >>> judge_note(None, Decision("REVIEW", "T9", None, "", "", 0.5))
    {'consulted': True, 'status': 'missing', 'heuristic_rule': 'T9', 'heuristic_verdict': 'REVIEW'}
    """
    out: dict[str, Any] = {"consulted": True, "status": (row or {}).get("status") or "missing",
                           "heuristic_rule": heuristic.rule, "heuristic_verdict": heuristic.verdict}
    if row and row.get("status") == "judged":
        out["labels"] = dict(sorted(Counter(c.get("label") for c in row.get("claims") or ()).items()))
    elif row and row.get("status") == "error":
        out["error_kind"] = row.get("error_kind")
    return out
