"""The LLM judge: an OpenAI-compatible chat model that labels an answer's claims against its context.

:class:`LLMJudge` is a :class:`~benchmark.answerers.chat.ChatEndpoint` -- the same client, cache,
retries, deadline, circuit breaker, pace and concurrency as the ``llm`` answerer, configured the same
way (``judge: {model, base_url, api_key_env, concurrency, ...}``; ``DIAGQA_JUDGE_MODEL`` and
``DIAGQA_JUDGE_BASE_URL`` may give the endpoint). Its own options: ``repairs`` (default 2: a reply
that is not valid judge JSON is sent back that many times with what was wrong) and ``max_tokens``
(default 1024).

:meth:`LLMJudge.judge_record` turns one sample record into one *judge row* (a line of
``judge.jsonl``):

* ``status``: ``judged`` (``claims`` holds the labels), ``error`` (no usable judgement: ``error`` and
  ``error_kind`` say why -- a failed call, or a reply still invalid after the repairs; never a
  score), or ``not_judged`` (``reason``: the answer failed, the answerer saw an image rather than a
  text context, or there is nothing to judge -- no claim and no explanation);
* ``claims``: per claim the judge's ``label``, its ``kind`` (``edge`` / ``relation`` for a listed
  claim, ``added`` for one the judge found), and ``structural``: the structural check's verdict on
  the same claim (``supported`` / ``unsupported`` / ``fabricated``; None for an added claim);
* ``usage`` and ``meta`` as an answer's (tokens, calls, cache hit, latency; attempts, repairs);
* ``unlisted``: structural claims past the first :data:`~benchmark.judge.prompt.MAX_LISTED` (24), when
  there were more -- they are not sent, so not compared.
"""
from __future__ import annotations

import time
from typing import Any, Sequence

from benchmark.answerers.chat import ChatEndpoint
from benchmark.judge.prompt import MAX_LISTED, build_judge_messages, judge_schema, parse_judgement


def _base_row(rec: dict[str, Any]) -> dict[str, Any]:
    return {"sample_id": rec.get("sample_id"), "answerer": rec.get("answerer"), "variant": rec.get("variant"),
            "question_id": rec.get("question_id")}


def not_judged_reason(rec: dict[str, Any]) -> str | None:
    """Why a sample is not sent to the judge, or None when it is.

    >>> not_judged_reason({"answer": None})
    'no answer (a stage failed)'
    >>> not_judged_reason({"answer": {"raw": "yes", "error": None, "explanation": ""}, "metrics": {"claims": []}})
    'nothing to judge: no claim and no explanation'
    >>> not_judged_reason({"answer": {"raw": "yes", "error": None, "explanation": "A -> B"}, "metrics": {"claims": []}}) is None
    True
    """
    ans = rec.get("answer")
    if rec.get("error") or ans is None:
        return "no answer (a stage failed)"
    if ans.get("error"):
        return "the answer is an error"
    if (ans.get("meta") or {}).get("input") == "image":
        return "image input: the answerer saw no text context to judge against"
    claims = (rec.get("metrics") or {}).get("claims") or []
    if not claims and not str(ans.get("explanation") or "").strip():
        return "nothing to judge: no claim and no explanation"
    return None


class LLMJudge(ChatEndpoint):
    """An OpenAI-compatible chat model labelling claims supported / contradicted / not in context."""

    stage = "judge"
    env_prefix = "DIAGQA_JUDGE"

    def __init__(self, repairs: int = 2, max_tokens: int = 1024, **options: Any) -> None:
        super().__init__(max_tokens=max_tokens, **options)
        self.repairs = max(0, int(repairs))
        self.config.update(repairs=self.repairs)

    def judge_record(self, rec: dict[str, Any]) -> dict[str, Any]:
        """The judge row of one sample record (see the module doc); never raises for a bad reply or call."""
        start = time.perf_counter()
        row = _base_row(rec)
        row["model"] = self.model
        reason = not_judged_reason(rec)
        if reason is not None:
            return dict(row, status="not_judged", reason=reason)
        every = list((rec.get("metrics") or {}).get("claims") or [])
        structural = every[:MAX_LISTED]
        if len(every) > MAX_LISTED:
            row["unlisted"] = len(every) - MAX_LISTED   # claims past the cap: not judged, not compared
        try:
            messages = build_judge_messages(str((rec.get("question") or {}).get("text") or ""),
                                            str((rec.get("context") or {}).get("text") or ""), rec["answer"], structural)
            reply = self.ask(messages, judge_schema(), lambda text: parse_judgement(text, len(structural)),
                             schema_name="diagqa_judgement", repairs=self.repairs, start=start)
        except Exception as exc:  # noqa: BLE001 - one bad sample never loses the pass
            return dict(row, status="error", error=self._scrub(f"{type(exc).__name__}: {exc}")[:500], error_kind="error")
        row.update(usage=reply.usage, meta={k: v for k, v in reply.meta.items() if k != "request_key"})
        if not reply.ok:
            return dict(row, status="error", error=reply.error, error_kind=reply.error_kind)
        claims = []
        for c in reply.value:
            s = structural[c.id - 1] if c.id is not None else None
            claims.append(dict(c.to_json(), kind=s.get("kind") if s else "added",
                               structural=s.get("verdict") if s else None))
        return dict(row, status="judged", claims=claims)

    def judge_many(self, records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Judge rows of many records, ``concurrency`` requests in flight, grouped by context (a server
        that reuses a prompt's prefix reads each context once); rows in the order of ``records``."""
        order = sorted(range(len(records)),
                       key=lambda i: (str((records[i].get("context") or {}).get("text") or ""), i))
        return self.map(self.judge_record, records, order)
