"""One OpenAI-compatible chat endpoint, asked for JSON: what the ``llm`` answerer and the LLM judge share.

:class:`ChatEndpoint` holds the official ``openai`` client and everything that keeps hours of requests
bounded and honest: the reply cache (only replies that parsed are stored), retries with exponential
backoff and ``Retry-After``, an overall deadline per request, a reply-size cap, a circuit breaker,
a requests-per-minute pace and a thread pool of ``concurrency`` requests. :meth:`ChatEndpoint.ask`
sends one conversation and returns a :class:`Reply`: the parsed value, or an error with a one-word
kind -- it never raises for a failed call or a bad reply. The options are those documented in
:mod:`benchmark.answerers.llm`.

``repairs`` (the judge uses it): when a reply does not parse, the conversation is sent again with the
bad reply and what was wrong with it, up to that many times, all within the request's one deadline; a
reply that still does not parse is an ``unparsable`` error, never a value.
"""
from __future__ import annotations

import re
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

from benchmark.answerers.cache import ReplyCache, cache_file, request_key
from benchmark.answerers.llm_http import CircuitBreaker, DeadlineExceeded, GuardedTransport, Pace, ReplyTooLarge, deadline
from benchmark.errors import DiagQAError, StageUnavailable
from benchmark.spec import SECRET_OPTION

RESPONSE_FORMATS = ("json_schema", "json_object_schema", "json_object", "none")
#: request failures that count toward the circuit breaker (an unparsable reply means the server works)
TRANSPORT_KINDS = {"timeout", "http_error", "rate_limited", "connection_error", "reply_too_large"}
#: what the endpoint is told after a reply that did not parse (``{problem}``: why)
REPAIR_PROMPT = ("Your reply could not be used: {problem}. Reply again with exactly one JSON object that follows "
                 "the requested format, and nothing else.")

T = TypeVar("T")


def response_format_field(style: str, schema: dict[str, Any], name: str = "diagqa_answer") -> dict[str, Any] | None:
    """The request's ``response_format`` for ``style`` (None for ``none``).

    >>> response_format_field("json_object_schema", {"type": "object"})
    {'type': 'json_object', 'schema': {'type': 'object'}}
    >>> response_format_field("json_schema", {"type": "object"})["json_schema"]["name"]
    'diagqa_answer'
    """
    if style == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
    if style == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    if style == "json_object":
        return {"type": "json_object"}
    return None


def formatted_rejected(exc: Exception) -> bool:
    """Whether an HTTP 400 complains about the structured-output field (``response_format``)."""
    text = str(getattr(exc, "body", "") or "") + str(exc)
    return "response_format" in text or "json_schema" in text


#: the error kind of a prompt longer than the model's context window
CONTEXT_TOO_LONG = "context_too_long"
#: how servers word that refusal (llama.cpp, llama-cpp-python, vLLM, OpenAI)
_CONTEXT_REFUSAL = re.compile(r"context (window|length)|n_ctx|exceed.{0,40}context|maximum context|too many tokens",
                              re.IGNORECASE)


def prompt_tokens(messages: list[dict[str, Any]]) -> int:
    """Tokens of a chat prompt, estimated on the safe side: characters / 3 of every text part (a BPE
    token of English averages about 4 characters; arrows, ids and non-Latin labels are shorter), plus
    8 per message for the chat template. Image parts are not counted.

    >>> prompt_tokens([{"role": "user", "content": "x" * 300}])
    108
    >>> prompt_tokens([{"role": "user", "content": [{"type": "text", "text": "abc"}, {"type": "image_url"}]}])
    9
    """
    total = 0
    for m in messages:
        content = m.get("content")
        parts = [content] if isinstance(content, str) else [p.get("text") or "" for p in content or []
                                                          if isinstance(p, dict) and p.get("type") == "text"]
        total += 8 + sum(-(-len(p) // 3) for p in parts)
    return total


class _Failure(Exception):
    """A request that failed for good: ``kind`` is the answer's error kind."""

    def __init__(self, kind: str, message: str, attempts: int, calls: int) -> None:
        super().__init__(message)
        self.kind, self.attempts, self.calls = kind, attempts, calls


@dataclass
class Reply:
    """What :meth:`ChatEndpoint.ask` got: ``value`` (what ``parse`` made of the reply) or ``error`` with
    ``error_kind``; ``usage`` as the answers' usage (tokens, calls, cache hit, latency, cost) and
    ``meta`` (request key, cached, attempts, tokens, latency, structured, repairs, the bad reply)."""

    value: Any = None
    error: str | None = None
    error_kind: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None


class ChatEndpoint:
    """An OpenAI-compatible chat model asked for JSON; bounded, concurrent, cached (see module doc).

    ``stage`` names the component in errors (``llm``, ``judge``); ``env_prefix`` names the environment
    variables that may give ``base_url`` and ``model`` (``<prefix>_BASE_URL``, ``<prefix>_MODEL``).
    """

    stage = "llm"
    env_prefix = "DIAGQA_LLM"

    def __init__(self, base_url: str | None = None, model: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 temperature: float = 0.0, max_tokens: int = 512, seed: int | None = 0, timeout_s: float = 60.0,
                 max_attempts: int = 4, backoff_s: float = 1.0, max_backoff_s: float = 30.0,
                 deadline_s: float = 300.0, max_retry_after_s: float = 60.0, breaker_after: int = 5,
                 concurrency: int = 1, requests_per_minute: float | None = None,
                 max_reply_bytes: int = 1_000_000, response_format: str = "json_schema",
                 price_per_1k_prompt: float | None = None, price_per_1k_completion: float | None = None,
                 cache_path: str | Path | None = "llm.sqlite", extra_params: dict[str, Any] | None = None,
                 context_window: int | None = None, api_key: Any = None, sleep: Callable[[float], None] = time.sleep, **unknown: Any) -> None:
        s = self.stage
        if api_key is not None or any(SECRET_OPTION.search(k) for k in unknown):
            raise DiagQAError(f"{s}: an API key must not be written into the run options (it would be stored in "
                              "run.json); put it in an environment variable and name that variable with api_key_env")
        if unknown:
            raise DiagQAError(f"{s}: unknown option(s) {', '.join(sorted(unknown))}")
        if context_window is not None and (isinstance(context_window, bool) or not isinstance(context_window, int)
                                           or context_window < 1):
            raise DiagQAError(f"{s}: context_window must be a whole number of tokens, not {context_window!r}")
        self.context_window = context_window
        if response_format not in RESPONSE_FORMATS:
            raise DiagQAError(f"{s}: response_format must be one of {', '.join(RESPONSE_FORMATS)}, not {response_format!r}")
        base_url = base_url or os.environ.get(f"{self.env_prefix}_BASE_URL")
        model = model or os.environ.get(f"{self.env_prefix}_MODEL")
        if not model:
            raise StageUnavailable(f"no model configured (set options {s}.model and {s}.base_url, "
                                   f"or {self.env_prefix}_MODEL and {self.env_prefix}_BASE_URL)")
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - the llm extra is part of the install
            raise StageUnavailable("the 'openai' package is not installed (pip install diagqa[llm])") from exc
        from benchmark.answerers.llm_http import httpx

        self._openai = openai
        self.model, self.base_url = model, base_url
        self.params: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens}
        if seed is not None:
            self.params["seed"] = seed
        self.params.update(extra_params or {})  # e.g. {"max_completion_tokens": 512} for endpoints that want it
        self.params = {k: v for k, v in self.params.items() if v is not None}
        self.max_attempts, self.backoff_s, self.max_backoff_s = max(1, int(max_attempts)), backoff_s, max_backoff_s
        self.timeout_s, self.deadline_s, self.max_retry_after_s = float(timeout_s), float(deadline_s), float(max_retry_after_s)
        self.response_format = response_format
        self._format_ok = response_format != "none"
        self.concurrency = max(1, int(concurrency))
        self.prices = (price_per_1k_prompt, price_per_1k_completion)
        self._secret = os.environ.get(api_key_env) or ""
        self._http = httpx.Client(transport=GuardedTransport(max_reply_bytes), timeout=timeout_s)
        self._client = openai.OpenAI(base_url=base_url, api_key=self._secret or "not-needed",
                                     timeout=timeout_s, max_retries=0, http_client=self._http)
        self.cache = ReplyCache(cache_file(cache_path)) if cache_path else None
        self.breaker = CircuitBreaker(breaker_after)
        self.pace = Pace(requests_per_minute, sleep=sleep)
        self._sleep = sleep
        self._lock = threading.Lock()
        self.config = {"base_url": base_url, "model": model, "api_key_env": api_key_env,
                       "api_key_set": bool(self._secret), "params": dict(self.params),
                       "response_format": response_format,
                       "timeout_s": timeout_s, "deadline_s": deadline_s, "max_attempts": self.max_attempts,
                       "backoff_s": backoff_s, "max_backoff_s": max_backoff_s, "max_retry_after_s": max_retry_after_s,
                       "breaker_after": breaker_after, "concurrency": self.concurrency,
                       "requests_per_minute": requests_per_minute, "max_reply_bytes": max_reply_bytes,
                       "price_per_1k_prompt": price_per_1k_prompt, "price_per_1k_completion": price_per_1k_completion,
                       "cache_path": str(self.cache.path) if self.cache is not None else None,
                       "context_window": context_window}

    def _over_window(self, messages: list[dict[str, Any]]) -> str | None:
        """Why ``messages`` cannot fit the context window, or None (also when the window is unknown)."""
        if self.context_window is None:
            return None
        need = prompt_tokens(messages) + int(self.params.get("max_tokens") or 0)
        if need <= self.context_window:
            return None
        return (f"not sent: the prompt (about {prompt_tokens(messages)} tokens) and max_tokens "
                f"({self.params.get('max_tokens', 0)}) exceed the model's context window of {self.context_window} tokens")

    # -- secrets -----------------------------------------------------------------------------------

    def _scrub(self, text: str) -> str:
        return text.replace(self._secret, "***") if self._secret and text else text

    # -- one request -------------------------------------------------------------------------------

    def _request(self, messages: list[dict[str, Any]], schema: dict[str, Any], until: float,
                 schema_name: str = "diagqa_answer") -> tuple[Any, bool]:
        """One HTTP call; (response, whether the structured-output field was sent)."""
        fmt = response_format_field(self.response_format, schema, schema_name) if self._format_ok else None
        extra = {"response_format": fmt} if fmt is not None else {}
        timeout = max(0.05, min(self.timeout_s, until - time.monotonic()))
        self.pace.wait()
        with deadline(until):
            return self._client.chat.completions.create(model=self.model, messages=messages, timeout=timeout,
                                                        **self.params, **extra), fmt is not None

    def _classify(self, exc: Exception) -> tuple[str, bool]:
        """(error kind, retryable) of a failed call."""
        o = self._openai
        cause = exc.__cause__
        if isinstance(cause, ReplyTooLarge):
            return "reply_too_large", False
        if isinstance(exc, o.APITimeoutError) or isinstance(cause, DeadlineExceeded):
            return "timeout", True
        if isinstance(exc, o.APIConnectionError):
            return "connection_error", True
        if isinstance(exc, o.APIStatusError):
            if exc.status_code == 429:
                return "rate_limited", True
            if exc.status_code == 400 and _CONTEXT_REFUSAL.search(str(exc)):
                return CONTEXT_TOO_LONG, False
            return "http_error", exc.status_code >= 500 or exc.status_code == 408
        return "http_error", False

    def _call(self, messages: list[dict[str, Any]], schema: dict[str, Any], schema_name: str = "diagqa_answer",
              until: float | None = None) -> tuple[str, dict[str, Any], int]:
        """(reply content, usage, attempts); raises :class:`_Failure` when no reply came in time."""
        if until is None:
            until = time.monotonic() + self.deadline_s
        calls = 0
        attempt = 0
        while True:
            attempt += 1
            sent_format = self._format_ok
            try:
                calls += 1
                resp, _ = self._request(messages, schema, until, schema_name)
                usage = resp.usage.model_dump(exclude_none=True) if getattr(resp, "usage", None) else {}
                usage = {k: v for k, v in usage.items() if isinstance(v, (int, float))}
                choice = resp.choices[0] if resp.choices else None
                content = (choice.message.content if choice is not None else None) or ""
                usage["finish_reason"] = getattr(choice, "finish_reason", None)
                return content, dict(usage, calls=calls), attempt
            except Exception as exc:  # noqa: BLE001 - classified below
                kind, retryable = self._classify(exc)
                status = getattr(exc, "status_code", None)
                if status == 400 and sent_format and formatted_rejected(exc):
                    self._format_ok = False  # the endpoint has no structured output: ask plainly from now on
                    attempt -= 1
                    continue
                what = f"HTTP {status}" if status else type(exc.__cause__ or exc).__name__
                message = f"{what} after {attempt} attempt(s): {exc.__cause__ or exc}"
                if attempt >= self.max_attempts or not retryable:
                    raise _Failure(kind, message, attempt, calls) from exc
                wait, why = self._wait(exc, attempt)
                if why:
                    raise _Failure(kind, f"{message}; {why}", attempt, calls) from exc
                if time.monotonic() + wait >= until:
                    raise _Failure("timeout", f"{message}; the next attempt would pass the {self.deadline_s:g} s deadline",
                                   attempt, calls) from exc
                self._sleep(wait)

    def _wait(self, exc: Exception, attempt: int) -> tuple[float, str | None]:
        """(seconds to wait before the next attempt, reason to give up instead or None): the server's
        Retry-After when it gives one in seconds and it is within the cap, else exponential backoff."""
        response = getattr(exc, "response", None)
        retry_after = response.headers.get("retry-after") if response is not None else None
        try:
            seconds = max(0.0, float(retry_after))
        except (TypeError, ValueError):
            return min(self.max_backoff_s, self.backoff_s * 2 ** (attempt - 1)), None
        if seconds > self.max_retry_after_s:
            return seconds, f"the server asked to retry after {seconds:g} s, more than max_retry_after_s={self.max_retry_after_s:g}"
        return seconds, None

    # -- usage -------------------------------------------------------------------------------------

    def _usage(self, usage: dict[str, Any], calls: int, cache_hit: bool, latency: float) -> dict[str, Any]:
        out = {"prompt_tokens": int(usage.get("prompt_tokens") or 0),
               "completion_tokens": int(usage.get("completion_tokens") or 0),
               "calls": calls, "cache_hit": cache_hit, "latency_s": round(latency, 6)}
        p_in, p_out = self.prices
        if p_in is not None or p_out is not None:
            out["cost"] = 0.0 if cache_hit else round(out["prompt_tokens"] / 1000 * (p_in or 0.0)
                                                      + out["completion_tokens"] / 1000 * (p_out or 0.0), 8)
        return out

    # -- one conversation --------------------------------------------------------------------------

    def ask(self, messages: list[dict[str, Any]], schema: dict[str, Any], parse: Callable[[str], Any], *,
            schema_name: str = "diagqa_answer", repairs: int = 0, start: float | None = None) -> Reply:
        """Send ``messages`` (cache first), parse the reply with ``parse`` (ValueError: not usable).

        A failed request is a :class:`Reply` with ``error`` and ``error_kind``; with the breaker open no
        request is made (``not_attempted``). A reply that ``parse`` refuses is sent back up to ``repairs``
        times with :data:`REPAIR_PROMPT`, then is an ``unparsable`` error (``meta["reply"]`` holds it, cut
        to 500 characters). Only a reply that parsed is cached, under the key of ``messages``; a cached
        reply that no longer parses is deleted and asked again.
        """
        start = time.perf_counter() if start is None else start
        meta: dict[str, Any] = {}
        fmt = self.response_format if self._format_ok else "none"
        key = request_key(self.model, messages, dict(self.params, response_format=fmt))
        meta["request_key"] = key
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            try:
                value = parse(hit["content"])
            except ValueError:  # written by an older version (or for another parser): ask again
                self.cache.delete(key)
                hit = None
        if hit is not None:
            usage = hit["usage"]
            meta.update(cached=True, attempts=0, tokens=usage, latency_s=round(time.perf_counter() - start, 6))
            return Reply(value, meta=meta, usage=self._usage(usage, 0, True, time.perf_counter() - start))
        if self.breaker.is_open:
            meta["latency_s"] = round(time.perf_counter() - start, 6)
            return Reply(None, error=f"not attempted: {self.breaker.after} requests in a row failed, so no more "
                                     "are made in this run (a re-run asks again)", error_kind="not_attempted",
                         meta=meta, usage=self._usage({}, 0, False, time.perf_counter() - start))
        too_long = self._over_window(messages)
        if too_long:
            meta["latency_s"] = round(time.perf_counter() - start, 6)
            return Reply(None, error=too_long, error_kind=CONTEXT_TOO_LONG, meta=meta,
                         usage=self._usage({}, 0, False, time.perf_counter() - start))
        until = time.monotonic() + self.deadline_s
        conversation = list(messages)
        total: dict[str, Any] = {}
        calls = attempts = 0
        for repair in range(max(0, int(repairs)) + 1):
            try:
                content, usage, tries = self._call(conversation, schema, schema_name, until)
            except _Failure as f:
                if f.kind != CONTEXT_TOO_LONG:  # the prompt's fault, not the endpoint's
                    self.breaker.failed()
                calls += f.calls
                latency = time.perf_counter() - start
                meta.update(latency_s=round(latency, 6), attempts=attempts + f.attempts)
                if repair:
                    meta["repairs"] = repair
                return Reply(None, error=self._scrub(str(f))[:500], error_kind=f.kind, meta=meta,
                             usage=self._usage(total, calls, False, latency))
            self.breaker.succeeded()
            calls += usage.pop("calls")
            attempts += tries
            for k, v in usage.items():
                total[k] = total.get(k, 0) + v if isinstance(v, (int, float)) and k != "finish_reason" else v
            content = self._scrub(content)
            try:
                value = parse(content)
            except ValueError as exc:
                problem = str(exc)
                if repair < repairs:
                    conversation = conversation + [{"role": "assistant", "content": content[:4000]},
                                                   {"role": "user", "content": REPAIR_PROMPT.format(problem=problem[:300])}]
                    continue
                latency = time.perf_counter() - start
                meta.update(attempts=attempts, tokens=total, latency_s=round(latency, 6), structured=self._format_ok,
                            reply=content[:500])
                if repairs:
                    meta["repairs"] = repair
                cut = " (the reply was cut off at max_tokens)" if usage.get("finish_reason") == "length" else ""
                return Reply(None, error=f"unparsable reply{cut}: {problem}"[:500], error_kind="unparsable", meta=meta,
                             usage=self._usage(total, calls, False, latency))
            latency = time.perf_counter() - start
            meta.update(attempts=attempts, tokens=total, latency_s=round(latency, 6), structured=self._format_ok)
            if repairs:
                meta["repairs"] = repair
            use = self._usage(total, calls, False, latency)
            if self.cache is not None:
                self.cache.put(key, self.model, content, total, use["latency_s"])
            return Reply(value, meta=meta, usage=use)
        raise AssertionError("unreachable")  # pragma: no cover

    def map(self, fn: Callable[[Any], T], items: Sequence[Any], order: Sequence[int] | None = None) -> list[T]:
        """``fn`` over ``items`` with ``concurrency`` calls in flight, started in ``order`` (default: as
        given); results in the order of ``items``."""
        order = list(range(len(items))) if order is None else list(order)
        out: list[Any] = [None] * len(items)
        if self.concurrency == 1 or len(items) <= 1:
            for i in order:
                out[i] = fn(items[i])
        else:
            with ThreadPoolExecutor(max_workers=min(self.concurrency, len(items))) as pool:
                for i, r in zip(order, pool.map(lambda i: fn(items[i]), order)):
                    out[i] = r
        return out
