"""Abstentions and answerer errors: the two ways an answer is not an attempt (DESIGN.md §5).

An answer *abstains* when its answerer flags it (``meta["abstained"]``), when it carries one of
the reference answerers' abstention messages, or when its text says it cannot tell and names no
answer. An abstention is measured (it is not a correct answer) but counted apart.

An answer whose call *failed* (timeout, HTTP error, unparsable reply) is an error: unmeasured for
accuracy, counted and listed. :func:`error_kind` names its kind.

>>> from benchmark.answers import Answer
>>> is_abstention(Answer("solver", None, meta={"abstained": True})), is_abstention(Answer("llm", "Cannot tell from the context."))
(True, True)
>>> is_abstention(Answer("solver", None, error="the context does not determine the answer"))
True
>>> is_abstention(Answer("llm", "No, it cannot reach it.")), is_abstention(Answer("llm", None, error="timeout after 3 attempt(s)"))
(False, False)
>>> error_kind("timeout after 3 attempt(s): Request timed out."), error_kind("unparsable reply: no JSON"), error_kind("boom")
('timeout', 'unparsable', 'answerer_error')
"""
from __future__ import annotations

import re
from typing import Any

#: messages the reference answerers recorded for an abstention (runs written before they flagged it)
ABSTENTION_MESSAGES = ("the context does not determine the answer", "no name in the context to answer with")

_ABSTAIN = re.compile(
    r"\b(?:cannot|can ?not|can't|unable to|impossible to)\s+(?:be\s+)?(?:tell|say|determine|determined|answer|know)"
    r"|\b(?:does|do)\s+not\s+(?:determine|say|show|tell)"
    r"|\b(?:not\s+(?:enough|sufficient)|insufficient)\s+(?:information|context|data)"
    r"|\b(?:unknown|undetermined|i\s+don'?t\s+know)\b"
    r"|не\s+могу\s+(?:сказать|определить|ответить)|невозможно\s+(?:сказать|определить)"
    r"|недостаточно\s+(?:данных|информации|контекста)|неизвестно|не\s+определя",
    re.IGNORECASE)


def says_cannot_tell(text: Any) -> bool:
    """Whether a reply's text says that the answer cannot be told.

    >>> says_cannot_tell("The context does not determine the answer"), says_cannot_tell("Нельзя: неизвестно"), says_cannot_tell("Auth")
    (True, True, False)
    """
    return isinstance(text, str) and bool(_ABSTAIN.search(text))


def is_abstention(answer: Any, value: Any = None) -> bool:
    """Whether ``answer`` (an :class:`benchmark.answers.Answer`) abstains; ``value`` is its normalised
    value when known: a reply whose text says it cannot tell abstains only when it names no answer."""
    if (answer.meta or {}).get("abstained"):
        return True
    if answer.error:
        return str(answer.error).strip().casefold() in ABSTENTION_MESSAGES
    return value is None and says_cannot_tell(answer.raw)


def error_kind(message: str, kind: str | None = None) -> str:
    """A short kind for an answerer's error message (``kind`` when the answerer gave one)."""
    if kind:
        return str(kind)
    m = str(message).casefold()
    if "timeout" in m or "timed out" in m:
        return "timeout"
    if "unparsable" in m or "parse" in m or "json" in m:
        return "unparsable"
    if "http" in m or "status" in m or "connection" in m or "rate limit" in m:
        return "http_error"
    return "answerer_error"
