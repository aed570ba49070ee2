"""What the LLM judge is asked and how its reply is read: NLI-style labels for an answer's claims.

The judge sees the context exactly as the answerer received it, the question, the answer and its
explanation, and the *listed claims*: the claims the structural faithfulness check found in the
answer (its cited edges, then the relations it read from the explanation), numbered. It labels
every listed claim, by its number, and adds any claim of the explanation the list misses
(``"id": null``). Each claim gets one label:

* ``supported``       -- the context states it;
* ``contradicted``    -- the context states the opposite (the arrow runs the other way, carries
  another label, or the context says it does not hold);
* ``not_in_context``  -- the context does not state it.

Labelling the listed claims is what lets the judge be measured against the structural check on the
same claims (:mod:`benchmark.judge.agreement`).

The reply must be one JSON object ``{"claims": [{"id", "claim", "source", "target", "label"}, ...]}``.
:func:`parse_judgement` is strict about its content (every listed claim labelled exactly once, ids in
range, labels from :data:`LABELS`) and lenient only about its wrapping (code fences, prose around
the object), as the answer parser is: a reply that breaks a rule is a ValueError that says which.

>>> parse_judgement('{"claims": [{"id": 1, "claim": "A -> B", "source": "A", "target": "B", "label": "supported"}]}', 1)
[JudgedClaim(id=1, claim='A -> B', source='A', target='B', label='supported')]
>>> parse_judgement('{"claims": []}', 1)
Traceback (most recent call last):
...
ValueError: listed claim 1 is not labelled
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Sequence

from benchmark.answerers.llm import _object_spans

LABELS = ("supported", "contradicted", "not_in_context")
#: the claims listed in one request at most (a longer list is cut; the rest are not judged)
MAX_LISTED = 24

SYSTEM = """You check an answer about a diagram against the context its author was given. Use only the context.
The context lists the diagram's arrows, one per line, as "Source -> Target [label]" ("--" and "<->" join nodes \
both ways), then nodes that have no arrow in the context, one per line. An empty context shows nothing.
Split the answer into atomic claims, each one relation between two nodes, and label every claim:
- "supported": the context states it;
- "contradicted": the context states the opposite (the arrow runs the other way, carries another label, \
or the context shows it does not hold);
- "not_in_context": the context does not state it.
Label every listed claim exactly once, giving its number as "id". Add any other claim the explanation makes, \
with "id": null.
Reply with exactly one JSON object and nothing else:
{"claims": [{"id": <number or null>, "claim": "<the claim>", "source": "<node>", "target": "<node>", \
"label": "supported" | "contradicted" | "not_in_context"}]}"""


@dataclass(frozen=True)
class JudgedClaim:
    """One claim as the judge labelled it; ``id`` is the listed claim's number, None for one it added."""

    id: int | None
    claim: str
    source: str
    target: str
    label: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def judge_schema(max_claims: int = MAX_LISTED + 8) -> dict[str, Any]:
    """The JSON schema of a judge reply (what grammar-constrained decoding follows).

    >>> judge_schema()["properties"]["claims"]["items"]["properties"]["label"]["enum"]
    ['supported', 'contradicted', 'not_in_context']
    """
    claim = {"type": "object",
             "properties": {"id": {"type": ["integer", "null"]}, "claim": {"type": "string"},
                            "source": {"type": "string"}, "target": {"type": "string"},
                            "label": {"type": "string", "enum": list(LABELS)}},
             "required": ["id", "claim", "source", "target", "label"], "additionalProperties": False}
    return {"type": "object", "properties": {"claims": {"type": "array", "items": claim, "maxItems": max_claims}},
            "required": ["claims"], "additionalProperties": False}


def listed_line(i: int, claim: dict[str, Any]) -> str:
    """One listed claim as the judge reads it.

    >>> listed_line(1, {"kind": "edge", "src": "User", "dst": "DB", "text": "User -> DB"})
    '1. User -> DB (an arrow the answer cites)'
    >>> listed_line(2, {"kind": "relation", "src": "A", "dst": "B", "text": "A calls B."})
    '2. A -> B (from the explanation: "A calls B.")'
    """
    where = "an arrow the answer cites" if claim.get("kind") == "edge" else \
        f'from the explanation: "{str(claim.get("text") or "")[:200]}"'
    return f"{i}. {claim.get('src')} -> {claim.get('dst')} ({where})"


def _answer_value(raw: Any) -> str:
    return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)


def build_judge_messages(question: str, context: str, answer: dict[str, Any],
                         listed: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chat messages asking for the labels of one answer's claims.

    The system message holds the instructions and the context (the same for every answer given that
    context, so a server that reuses a prompt's prefix reads it once); the user message the question,
    the answer, its explanation and the listed claims.
    """
    system = SYSTEM + "\n\nContext:\n" + (context or "(empty: the answerer was given nothing)")
    lines = [f"Question: {question}", f"Answer: {_answer_value(answer.get('raw'))}"]
    explanation = str(answer.get("explanation") or "").strip()
    lines.append(f"Explanation: {explanation}" if explanation else "Explanation: (none)")
    if listed:
        lines.append("Listed claims:")
        lines += [listed_line(i, c) for i, c in enumerate(listed, 1)]
    else:
        lines.append("Listed claims: (none; split the explanation yourself)")
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)}]


def _claims_object(text: str) -> Any:
    """The reply's JSON object holding ``claims``: the whole reply, else the first top-level ``{...}``
    in it that has the key (code fences and prose around it are ignored)."""
    try:
        obj = json.loads(text)
        if isinstance(obj, dict) and "claims" in obj:
            return obj
    except (ValueError, RecursionError):
        pass
    for a, b in _object_spans(text):
        try:
            obj = json.loads(text[a:b])
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict) and "claims" in obj:
            return obj
    raise ValueError(f"no JSON object with 'claims' in the reply: {text[:80]!r}")


def parse_judgement(content: str, n_listed: int) -> list[JudgedClaim]:
    """The judged claims of a reply; ValueError (saying what is wrong) when it breaks a rule.

    >>> reply = '```json\\n{"claims": [{"id": 2, "claim": "B -> C", "source": "B", "target": "C", "label": "contradicted"},' \\
    ...         ' {"id": 1, "claim": "A -> B", "source": "A", "target": "B", "label": "supported"},' \\
    ...         ' {"id": null, "claim": "C -> D", "source": "C", "target": "D", "label": "not_in_context"}]}\\n```'
    >>> [(c.id, c.label) for c in parse_judgement(reply, 2)]
    [(1, 'supported'), (2, 'contradicted'), (None, 'not_in_context')]
    >>> parse_judgement('{"claims": [{"id": 1, "claim": "x", "source": "A", "target": "B", "label": "true"}]}', 1)
    Traceback (most recent call last):
    ...
    ValueError: claim 1: label 'true' is not one of supported, contradicted, not_in_context
    >>> parse_judgement('{"claims": [{"id": 3, "claim": "x", "source": "A", "target": "B", "label": "supported"}]}', 1)
    Traceback (most recent call last):
    ...
    ValueError: claim 1: id 3 is not a listed claim (1..1)
    """
    text = (content or "").strip()
    if not text:
        raise ValueError("empty reply")
    items = _claims_object(text)["claims"]
    if not isinstance(items, list):
        raise ValueError("'claims' is not a list")
    listed: dict[int, JudgedClaim] = {}
    added: list[JudgedClaim] = []
    for n, item in enumerate(items, 1):
        if not isinstance(item, dict):
            raise ValueError(f"claim {n} is not an object")
        label = item.get("label")
        if label not in LABELS:
            raise ValueError(f"claim {n}: label {label!r} is not one of {', '.join(LABELS)}")
        cid = item.get("id")
        if cid is not None and (isinstance(cid, bool) or not isinstance(cid, int)):
            raise ValueError(f"claim {n}: id {cid!r} is not a number or null")
        for key in ("claim", "source", "target"):
            if not isinstance(item.get(key, ""), str):
                raise ValueError(f"claim {n}: {key} is not a string")
        claim = JudgedClaim(cid, str(item.get("claim") or ""), str(item.get("source") or ""),
                            str(item.get("target") or ""), label)
        if cid is None:
            added.append(claim)
            continue
        if not 1 <= cid <= n_listed:
            raise ValueError(f"claim {n}: id {cid} is not a listed claim (1..{n_listed})")
        if cid in listed:
            raise ValueError(f"listed claim {cid} is labelled twice")
        listed[cid] = claim
    missing = [i for i in range(1, n_listed + 1) if i not in listed]
    if missing:
        raise ValueError(f"listed claim{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))} "
                         f"{'are' if len(missing) > 1 else 'is'} not labelled")
    return [listed[i] for i in sorted(listed)] + added
