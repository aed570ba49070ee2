"""What an answerer gives back (:class:`Answer`) and the claims an answer rests on (:class:`Claim`).

An answer is kept exactly as given (``raw``): normalising it to a canonical value is the
metrics' job (:mod:`benchmark.metrics.accuracy`), so a stored answer can be re-scored later.

>>> a = Answer("solver", "yes", evidence=(("User", "DB"),), explanation="User → DB", meta={"latency_s": 0.1})
>>> Answer.from_json(a.to_json()) == a
True
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CLAIM_KINDS = ("edge", "relation")


@dataclass(frozen=True)
class Claim:
    """One relation an answer rests on.

    ``kind`` is ``"edge"`` for a cited evidence edge and ``"relation"`` for one stated in the
    explanation; ``src``/``dst`` are the node texts as the answerer wrote them (labels or ids).
    """

    kind: str
    src: str
    dst: str
    text: str

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "src": self.src, "dst": self.dst, "text": self.text}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Claim":
        return cls(str(data["kind"]), str(data["src"]), str(data["dst"]), str(data.get("text", "")))


@dataclass(frozen=True)
class Answer:
    """An answerer's reply to one question.

    ``error`` says why there is no usable answer (timeout, unparsable reply ...); such an answer
    is still recorded, and is unmeasured for accuracy rather than wrong. ``error_kind`` names the
    failure in one word (``timeout``, ``http_error``, ``rate_limited``, ``connection_error``,
    ``reply_too_large``, ``unparsable``, ``not_attempted``). ``usage`` is what answering cost
    (``prompt_tokens``, ``completion_tokens``, ``calls``, ``cache_hit``, ``latency_s``, and
    ``cost`` when prices are configured). ``meta`` holds latency_s, cached, tokens, model.
    Both are written to JSON only when set, so answers of answerers without them keep their form.
    """

    answerer: str
    raw: Any
    evidence: tuple[tuple[str, str], ...] = ()
    explanation: str = ""
    error: str | None = None
    meta: dict = field(default_factory=dict, compare=True, hash=False)
    error_kind: str | None = None
    usage: dict | None = field(default=None, compare=True, hash=False)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (sets become sorted lists)."""
        raw = self.raw
        if isinstance(raw, (set, frozenset)):
            raw = sorted(raw, key=str)
        elif isinstance(raw, tuple):
            raw = list(raw)
        out = {"answerer": self.answerer, "raw": raw, "evidence": [list(e) for e in self.evidence],
               "explanation": self.explanation, "error": self.error, "meta": dict(self.meta)}
        if self.error_kind is not None:
            out["error_kind"] = self.error_kind
        if self.usage is not None:
            out["usage"] = dict(self.usage)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Answer":
        return cls(answerer=str(data["answerer"]), raw=data.get("raw"),
                   evidence=evidence_pairs(data.get("evidence") or ()),
                   explanation=str(data.get("explanation") or ""), error=data.get("error"),
                   meta=dict(data.get("meta") or {}), error_kind=data.get("error_kind"),
                   usage=dict(data["usage"]) if data.get("usage") is not None else None)


def evidence_pairs(items: Any) -> tuple[tuple[str, str], ...]:
    """``[[src, dst], ...]`` (extra items such as a label are ignored) -> tuple of pairs.

    Raises ValueError on anything that is not a list of pairs.

    >>> evidence_pairs([["A", "B"], ("B", "C", "x")])
    (('A', 'B'), ('B', 'C'))
    """
    if not isinstance(items, (list, tuple)):
        raise ValueError(f"evidence must be a list of [src, dst] pairs, got {items!r}")
    out = []
    for item in items:
        if not isinstance(item, (list, tuple)) or len(item) < 2 or any(isinstance(x, (list, dict)) for x in item[:2]):
            raise ValueError(f"evidence item {item!r} is not a [src, dst] pair")
        out.append((str(item[0]), str(item[1])))
    return tuple(out)
