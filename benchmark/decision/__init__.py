"""The decision layer: ACCEPT / REVIEW / REJECT per answer, with failure type, reason, next action,
confidence and the rule that fired.

* :mod:`.signals` -- text signals (attribution, specificity, composite, relevance, context quality,
  disagreement), pure formulas plus one batched embedding pass
* :mod:`.rules`   -- the graph rules (exact, first) and the text rules, in order
* :mod:`.config`  -- thresholds (``configs/decision.yaml``), with the documented defaults
* :mod:`.judge`   -- the LLM judge's rules J1-J3, consulted only on uncertain text decisions
* :mod:`.apply`   -- the layer over a run's ``samples.jsonl``
* :mod:`.section` -- the report section (decision mix, the layer's precision and recall, disagreements)
"""
