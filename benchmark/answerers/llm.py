"""``llm``: any OpenAI-compatible chat endpoint, through the official ``openai`` client.

Configuration (run options ``llm: {...}``): ``base_url``, ``model``, ``api_key_env`` (the *name*
of the environment variable that holds the key -- the key itself never reaches logs, caches or
results), sampling ``temperature``/``max_tokens``/``seed``, ``timeout_s``, ``max_attempts``,
``backoff_s``, ``cache_path`` and ``extra_params`` (more request fields; ``None`` drops a default).
``base_url`` and ``model`` may also come from the environment variables ``DIAGQA_LLM_BASE_URL``
and ``DIAGQA_LLM_MODEL``; without a model the stage is unavailable and a run goes on without it.

The model is asked for one JSON object ``{answer, evidence: [[src, dst], ...], explanation}``.
Replies are parsed leniently (code fences, text around the object); 429, 5xx, timeouts and
connection errors are retried with exponential backoff a bounded number of times; replies are
cached in SQLite (:mod:`benchmark.answerers.cache`) so re-runs are free. Every failure ends up in
:attr:`Answer.error` -- nothing is raised out of :meth:`LLMAnswerer.answer`.
"""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any, Callable

from benchmark.answerers.cache import ReplyCache, request_key
from benchmark.answers import Answer, evidence_pairs
from benchmark.errors import StageUnavailable
from benchmark.questions import Question
from benchmark.stages import ANSWERERS

FORMATS = {
    "bool": '"yes" or "no"',
    "node": "the label of one node, as written in the context",
    "nodes": "a JSON list of node labels (an empty list when there are none)",
    "int": "an integer",
    "label": "the text written on the arrow, as in the context",
    "path": "a JSON list of node labels, from the first step to the last",
}

SYSTEM_PROMPT = """You answer questions about one diagram, using only the context below.
The context lists the diagram's arrows, one per line, as "Source -> Target [label]" ("--" and "<->" \
join nodes both ways), then nodes that have no arrow in the context, one per line.

Reply with exactly one JSON object and nothing else:
{{"answer": <answer>, "evidence": [["Source", "Target"], ...], "explanation": "<one or two sentences>"}}
- answer: {answer_format}
- evidence: the arrows of the context your answer rests on, each as [source label, target label]
- explanation: the relations you used, written like "A -> B -> C"

Context:
{context}"""

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
DEFAULT_CACHE = Path(".cache") / "llm.sqlite"


def parse_reply(content: str) -> tuple[Any, tuple[tuple[str, str], ...], str]:
    """(answer, evidence pairs, explanation) from a model's reply; ValueError when there is none.

    >>> parse_reply('Sure! ```json\\n{"answer": "yes", "evidence": [["A", "B"]], "explanation": "A -> B"}\\n``` Hope it helps')
    ('yes', (('A', 'B'),), 'A -> B')
    >>> parse_reply('{"answer": 3} and some trailing text {')
    (3, (), '')
    """
    text = (content or "").strip()
    if not text:
        raise ValueError("empty reply")
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for cand in candidates:
        for start in [i for i, c in enumerate(cand) if c == "{"]:
            try:
                obj, _ = decoder.raw_decode(cand[start:])
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict) and "answer" in obj:
                explanation = obj.get("explanation") or ""
                return obj["answer"], evidence_pairs(obj.get("evidence") or []), str(explanation)
    raise ValueError(f"no JSON object with an 'answer' in the reply: {text[:80]!r}")


def build_messages(question: Question, context_text: str) -> list[dict[str, str]]:
    """The chat messages for one question: instructions, answer format and context, then the question."""
    system = SYSTEM_PROMPT.format(answer_format=FORMATS[question.kind], context=context_text or "(empty: nothing was retrieved)")
    return [{"role": "system", "content": system}, {"role": "user", "content": question.text}]


@ANSWERERS.register("llm")
class LLMAnswerer:
    """An OpenAI-compatible chat model asked for JSON; cached, retried, resumable."""

    name = "llm"

    def __init__(self, base_url: str | None = None, model: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 temperature: float = 0.0, max_tokens: int = 512, seed: int | None = 0, timeout_s: float = 60.0,
                 max_attempts: int = 4, backoff_s: float = 1.0, max_backoff_s: float = 30.0,
                 cache_path: str | Path | None = DEFAULT_CACHE, extra_params: dict[str, Any] | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        base_url = base_url or os.environ.get("DIAGQA_LLM_BASE_URL")
        model = model or os.environ.get("DIAGQA_LLM_MODEL")
        if not model:
            raise StageUnavailable("no model configured (set options llm.model and llm.base_url, "
                                   "or DIAGQA_LLM_MODEL and DIAGQA_LLM_BASE_URL)")
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - the llm extra is part of the install
            raise StageUnavailable("the 'openai' package is not installed (pip install diagqa[llm])") from exc
        self._openai = openai
        self.model, self.base_url = model, base_url
        self.params: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens}
        if seed is not None:
            self.params["seed"] = seed
        self.params.update(extra_params or {})  # e.g. {"max_completion_tokens": 512} for endpoints that want it
        self.params = {k: v for k, v in self.params.items() if v is not None}
        self.max_attempts, self.backoff_s, self.max_backoff_s = max(1, int(max_attempts)), backoff_s, max_backoff_s
        self._secret = os.environ.get(api_key_env) or ""
        self._client = openai.OpenAI(base_url=base_url, api_key=self._secret or "not-needed",
                                     timeout=timeout_s, max_retries=0)
        self.cache = ReplyCache(cache_path) if cache_path else None
        self._sleep = sleep
        self.config = {"base_url": base_url, "model": model, "api_key_env": api_key_env,
                       "api_key_set": bool(self._secret), "params": dict(self.params), "timeout_s": timeout_s,
                       "max_attempts": self.max_attempts, "backoff_s": backoff_s,
                       "cache_path": str(cache_path) if cache_path else None}

    def _scrub(self, text: str) -> str:
        return text.replace(self._secret, "***") if self._secret else text

    def _retryable(self, exc: Exception) -> bool:
        o = self._openai
        if isinstance(exc, (o.APITimeoutError, o.APIConnectionError, o.RateLimitError, o.InternalServerError)):
            return True
        return isinstance(exc, o.APIStatusError) and (exc.status_code == 429 or exc.status_code >= 500)

    def _wait(self, exc: Exception, attempt: int) -> float:
        """Seconds to wait before the next attempt: the server's Retry-After when it gives one
        in seconds, else exponential backoff."""
        response = getattr(exc, "response", None)
        retry_after = response.headers.get("retry-after") if response is not None else None
        try:
            return max(0.0, float(retry_after))
        except (TypeError, ValueError):
            return self.backoff_s * 2 ** (attempt - 1)

    def _call(self, messages: list[dict[str, str]]) -> tuple[str, dict[str, Any], int]:
        """(reply content, usage, attempts); raises the last error when every attempt failed."""
        for attempt in range(1, self.max_attempts + 1):
            try:
                resp = self._client.chat.completions.create(model=self.model, messages=messages, **self.params)
                usage = resp.usage.model_dump(exclude_none=True) if getattr(resp, "usage", None) else {}
                usage = {k: v for k, v in usage.items() if isinstance(v, (int, float))}
                return resp.choices[0].message.content or "", usage, attempt
            except Exception as exc:  # noqa: BLE001 - classified below
                if attempt == self.max_attempts or not self._retryable(exc):
                    exc.attempts = attempt  # type: ignore[attr-defined]
                    raise
                self._sleep(min(self.max_backoff_s, self._wait(exc, attempt)))
        raise AssertionError("unreachable")  # pragma: no cover

    def answer(self, question: Question, context: Any) -> Answer:
        start = time.perf_counter()
        meta: dict[str, Any] = {"model": self.model, "cached": False}
        try:
            messages = build_messages(question, context.text if context is not None else "")
            key = request_key(self.model, messages, self.params)
            meta["request_key"] = key
            hit = self.cache.get(key) if self.cache is not None else None
            if hit is not None:
                content, usage = hit["content"], hit["usage"]
                meta.update(cached=True, attempts=0)
            else:
                content, usage, attempts = self._call(messages)
                meta["attempts"] = attempts
                if self.cache is not None:
                    self.cache.put(key, self.model, content, usage, round(time.perf_counter() - start, 6))
            meta["tokens"] = usage
            meta["latency_s"] = round(time.perf_counter() - start, 6)
            try:
                raw, evidence, explanation = parse_reply(content)
            except ValueError as exc:
                meta["reply"] = content[:500]
                return Answer(self.name, None, error=f"unparsable reply: {exc}", meta=meta)
            return Answer(self.name, raw, evidence=evidence, explanation=explanation, meta=meta)
        except Exception as exc:  # noqa: BLE001 - one bad sample never loses a run
            meta["latency_s"] = round(time.perf_counter() - start, 6)
            meta["attempts"] = getattr(exc, "attempts", meta.get("attempts"))
            status = getattr(exc, "status_code", None)
            what = f"HTTP {status}" if status else type(exc).__name__
            return Answer(self.name, None, error=self._scrub(f"{what} after {meta['attempts'] or 1} attempt(s): {exc}")[:500],
                          meta=meta)
