"""Citation check: every edge an answer cites must be in the context it was given.

It reads the verdicts faithfulness already gave the answer's ``edge`` claims (its cited evidence,
:mod:`benchmark.metrics.faithfulness`), so it adds no second matching of names to nodes; relations
stated only in the explanation are not citations and are left to faithfulness. A cited edge is

* *in the context* -- verdict ``supported``;
* *outside the context* -- an **unfaithful citation**: the answer cites structure it was not shown
  (verdict ``unsupported``: the diagram has the edge elsewhere, or ``fabricated``);
* *not in the diagram* at all -- a **fabricated citation** (verdict ``fabricated``), a subset of the above.

An answer passes the check when it cites at least one edge and every cited edge is in its context;
it fails when one is outside; with no citation the check is unmeasured (None), never a pass.

>>> claims = [{"kind": "edge", "verdict": "supported"}, {"kind": "edge", "verdict": "fabricated"},
...           {"kind": "relation", "verdict": "unsupported"}]
>>> citation_check(claims)
{'cited': 2, 'in_context': 1, 'outside_context': 1, 'not_in_diagram': 1, 'passes': False}
>>> citation_check([{"kind": "relation", "verdict": "supported"}])["passes"] is None
True
"""
from __future__ import annotations

from typing import Any, Iterable


def citation_check(claims: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Counts of an answer's cited edges by where they are (see the module doc), and whether it passes."""
    verdicts = [c.get("verdict") for c in claims if c.get("kind") == "edge"]
    inside = verdicts.count("supported")
    outside = len(verdicts) - inside
    return {"cited": len(verdicts), "in_context": inside, "outside_context": outside,
            "not_in_diagram": verdicts.count("fabricated"), "passes": (outside == 0) if verdicts else None}
