"""``llm``: any OpenAI-compatible chat endpoint, through the official ``openai`` client.

Configuration (run options ``llm: {...}``):

* endpoint: ``base_url``, ``model``, ``api_key_env`` (the *name* of the environment variable that
  holds the key; a key written into the options themselves is refused), ``extra_params`` (more
  request fields; ``None`` drops a default). ``base_url`` and ``model`` may also come from
  ``DIAGQA_LLM_BASE_URL`` and ``DIAGQA_LLM_MODEL``; without a model the stage is unavailable.
* what is sent: ``input`` -- ``text`` (the context as arrow lines), ``image`` (the diagram PNG as
  base64 data-URL image parts, no text context) or ``image+text``; ``image_fit`` -- ``tiles`` (the
  default: the PNG cut into legible tiles that fit a vision model's input size, see
  :mod:`benchmark.image_input`; ``image_long_side``, ``image_max_pixels``, ``image_max_aspect``,
  ``image_min_label_px`` and ``image_max_tiles`` change its budget) or ``none`` (the file as it is,
  left to the endpoint to scale); sampling ``temperature``,
  ``max_tokens``, ``seed``; ``explanation_chars`` (the longest explanation asked for; 0 asks for
  none, and the cited evidence edges are then the answer's only claims).
* the reply's form: ``response_format`` -- ``json_schema`` (OpenAI structured outputs:
  grammar-constrained decoding where the endpoint has it), ``json_object_schema`` (the form
  llama-cpp-python's server takes: ``{"type": "json_object", "schema": ...}``), ``json_object`` or
  ``none``. An endpoint that rejects the field with HTTP 400 is asked again without it, once, and
  then never with it; replies are parsed leniently either way (code fences, text around the object)
  in time linear in their length.
* bounded time: ``timeout_s`` (per network read), ``deadline_s`` (overall, per request, over every
  attempt and wait), ``max_attempts``, ``backoff_s``/``max_backoff_s`` (exponential backoff), a
  server's ``Retry-After`` honoured up to ``max_retry_after_s`` (a longer one ends the request
  rather than wait), ``breaker_after`` (after that many consecutive failed requests no more are
  made: the rest are answered ``not_attempted``, and are asked again on a re-run) and
  ``max_reply_bytes`` (a larger reply body is cut off and is an error).
* throughput: ``concurrency`` requests in flight (a thread pool, independent of the run's
  ``--workers`` processes; each worker process has its own) and an optional ``requests_per_minute``.
* ``cache_path`` (SQLite, relative paths under ``$DIAGQA_CACHE``; ``None`` disables the cache);
  ``price_per_1k_prompt``/``price_per_1k_completion`` for a cost in the usage roll-up.

Every failure ends up in :attr:`Answer.error` with a one-word :attr:`Answer.error_kind` --
nothing is raised out of :meth:`LLMAnswerer.answer` -- and only replies that parsed are cached.
"""
from __future__ import annotations

import base64
import json
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Sequence

from benchmark import image_input
from benchmark.answerers.cache import ReplyCache, cache_file, request_key
from benchmark.answerers.llm_http import CircuitBreaker, DeadlineExceeded, GuardedTransport, Pace, ReplyTooLarge, deadline
from benchmark.answers import Answer, evidence_pairs
from benchmark.errors import DiagQAError, StageUnavailable
from benchmark.questions import Question
from benchmark.spec import SECRET_OPTION
from benchmark.stages import ANSWERERS

FORMATS = {
    "bool": '"yes" or "no"',
    "node": "the label of one node, as written in the diagram",
    "nodes": "a JSON list of node labels (an empty list when there are none)",
    "int": "an integer",
    "label": "the text written on the arrow, as in the diagram",
    "path": "a JSON list of node labels, from the first step to the last",
}

INSTRUCTIONS = """You answer questions about one diagram{source}.
Reply with exactly one JSON object and nothing else:
{{"answer": <answer>, "evidence": [["Source", "Target"], ...]{explanation_field}}}
- evidence: the arrows your answer rests on, each as [source label, target label]{explanation_rule}"""
EXPLANATION_FIELD = ', "explanation": "<a few words>"'
EXPLANATION_RULE = '\n- explanation: at most {chars} characters, the relations you used, like "A -> B -> C"'

TEXT_SOURCE = """, using only the context below.
The context lists the diagram's arrows, one per line, as "Source -> Target [label]" ("--" and "<->" \
join nodes both ways), then nodes that have no arrow in the context, one per line"""
IMAGE_SOURCE = ", shown in the attached image"
IMAGE_TEXT_SOURCE = """, shown in the attached image and described in the context below.
The context lists the diagram's arrows, one per line, as "Source -> Target [label]" ("--" and "<->" \
join nodes both ways), then nodes that have no arrow in the context, one per line"""

INPUTS = ("text", "image", "image+text")
#: how the PNG is fitted to the model's input: legible tiles, or the file as it is
IMAGE_FITS = ("tiles", "none")
TILES_NOTE = ("The diagram is shown in {n} overlapping tiles, {rows} row(s) by {cols} column(s), "
              "in reading order (left to right, then top to bottom).")
RESPONSE_FORMATS = ("json_schema", "json_object_schema", "json_object", "none")
#: request failures that count toward the circuit breaker (an unparsable reply means the server works)
TRANSPORT_KINDS = {"timeout", "http_error", "rate_limited", "connection_error", "reply_too_large"}


def answer_schema(kind: str, explanation_chars: int = 200, max_evidence: int = 8) -> dict[str, Any]:
    """The JSON schema of a reply to a question of ``kind`` (what grammar-constrained decoding follows);
    ``explanation_chars=0`` asks for no explanation.

    >>> answer_schema("bool")["properties"]["answer"]
    {'type': 'string', 'enum': ['yes', 'no']}
    >>> answer_schema("int")["required"], answer_schema("int", 0)["required"]
    (['answer', 'evidence', 'explanation'], ['answer', 'evidence'])
    """
    answer = {
        "bool": {"type": "string", "enum": ["yes", "no"]},
        "int": {"type": "integer"},
        "nodes": {"type": "array", "items": {"type": "string"}},
        "path": {"type": "array", "items": {"type": "string"}},
    }.get(kind, {"type": "string"})
    pair = {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2}
    props: dict[str, Any] = {"answer": answer, "evidence": {"type": "array", "items": pair, "maxItems": max_evidence}}
    if explanation_chars > 0:
        props["explanation"] = {"type": "string", "maxLength": explanation_chars}
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def response_format_field(style: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The request's ``response_format`` for ``style`` (None for ``none``).

    >>> response_format_field("json_object_schema", {"type": "object"})
    {'type': 'json_object', 'schema': {'type': 'object'}}
    >>> response_format_field("json_schema", {"type": "object"})["json_schema"]["name"]
    'diagqa_answer'
    """
    if style == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "diagqa_answer", "schema": schema, "strict": True}}
    if style == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    if style == "json_object":
        return {"type": "json_object"}
    return None


_TOKENS = re.compile(r'\\.|["{}]', re.DOTALL)


def _object_spans(text: str) -> list[tuple[int, int]]:
    """Start and end of each outermost balanced ``{...}`` in ``text``, braces inside JSON strings
    ignored; an opening brace never closed (stray text before an object) is passed over.

    One pass over the braces and quotes (a regular expression skips everything else), so the time
    is linear in the text's length.

    >>> _object_spans('a {"x": "}"} b {"y": {}} {')
    [(2, 12), (15, 24)]
    >>> _object_spans('set {a then {"answer": 1}')
    [(12, 25)]
    """
    stack: list[int] = []
    spans: list[tuple[int, int]] = []
    in_str = False
    for m in _TOKENS.finditer(text):
        c = m.group()
        if in_str:
            if c == '"':
                in_str = False
        elif c == '"':
            in_str = bool(stack)
        elif c == "{":
            stack.append(m.start())
        elif c == "}" and stack:
            spans.append((stack.pop(), m.end()))
    spans.sort(key=lambda p: (p[0], -p[1]))
    out: list[tuple[int, int]] = []
    end = -1
    for a, b in spans:
        if a >= end:
            out.append((a, b))
            end = b
    return out


_ANSWER_KEY = re.compile(r'\{\s*"answer"\s*:')
#: objects tried from ``{"answer":`` positions when no balanced object parses (bounds the work)
_MAX_STARTS = 8


def parse_reply(content: str) -> tuple[Any, tuple[tuple[str, str], ...], str]:
    """(answer, evidence pairs, explanation) from a model's reply; ValueError when there is none.

    The whole reply is tried as JSON first, then each top-level ``{...}`` in it (code fences and
    prose around the object are ignored), then decoding from the first few ``{"answer":`` in it:
    a bounded number of passes over the reply, so the time is linear in its length.

    >>> parse_reply('Sure! ```json\\n{"answer": "yes", "evidence": [["A", "B"]], "explanation": "A -> B"}\\n``` Hope it helps')
    ('yes', (('A', 'B'),), 'A -> B')
    >>> parse_reply('{"answer": 3} and some trailing text {')
    (3, (), '')
    >>> parse_reply('{' * 50 + '{"answer": "no", "evidence": []}')[0]
    'no'
    """
    text = (content or "").strip()
    if not text:
        raise ValueError("empty reply")
    problem = None

    def accept(obj: Any) -> tuple[Any, tuple[tuple[str, str], ...], str] | None:
        nonlocal problem
        if not (isinstance(obj, dict) and "answer" in obj):
            return None
        if obj["answer"] is None:
            problem = "the answer is null"
            return None
        try:
            evidence = evidence_pairs(obj.get("evidence") or [])
        except ValueError as exc:
            problem = str(exc)
            return None
        return obj["answer"], evidence, str(obj.get("explanation") or "")

    try:
        found = accept(json.loads(text))
        if found:
            return found
    except (ValueError, RecursionError):
        pass
    for a, b in _object_spans(text):
        try:
            found = accept(json.loads(text[a:b]))
        except (ValueError, RecursionError):
            continue
        if found:
            return found
    decoder = json.JSONDecoder()
    for i, m in enumerate(_ANSWER_KEY.finditer(text)):
        if i >= _MAX_STARTS:
            break
        try:
            found = accept(decoder.raw_decode(text, m.start())[0])
        except (ValueError, RecursionError):
            continue
        if found:
            return found
    raise ValueError(problem or f"no JSON object with an 'answer' in the reply: {text[:80]!r}")


def build_messages(question: Question, context_text: str, input: str = "text",
                   image_url: str | Sequence[str] | None = None, explanation_chars: int = 200,
                   grid: tuple[int, int] = (1, 1)) -> list[dict[str, Any]]:
    """The chat messages for one question.

    The system message holds what is the same for every question about one context (instructions,
    then the context), so a server that reuses a prompt's prefix reads it once; the user message
    holds the question, its answer format and, for image input, the diagram: one image part per
    tile (``image_url`` a list), with a line saying how the ``grid`` (rows, columns) of overlapping
    tiles is laid out when there is more than one.
    """
    source = {"text": TEXT_SOURCE, "image": IMAGE_SOURCE, "image+text": IMAGE_TEXT_SOURCE}[input]
    system = INSTRUCTIONS.format(source=source, explanation_field=EXPLANATION_FIELD if explanation_chars > 0 else "",
                                 explanation_rule=EXPLANATION_RULE.format(chars=explanation_chars)
                                 if explanation_chars > 0 else "")
    if input != "image":
        system += "\n\nContext:\n" + (context_text or "(empty: nothing was retrieved)")
    user_text = f"{question.text}\nanswer: {FORMATS[question.kind]}"
    if input == "text":
        return [{"role": "system", "content": system}, {"role": "user", "content": user_text}]
    urls = [image_url] if isinstance(image_url, str) else list(image_url or [])
    if not urls:
        raise ValueError("image input needs the diagram's PNG")
    parts: list[dict[str, Any]] = [{"type": "text", "text": user_text}]
    if len(urls) > 1:
        rows, cols = grid
        parts.append({"type": "text", "text": TILES_NOTE.format(n=len(urls), rows=rows, cols=cols)})
    parts += [{"type": "image_url", "image_url": {"url": u}} for u in urls]
    return [{"role": "system", "content": system}, {"role": "user", "content": parts}]


def png_data_url(path: Path | str | bytes) -> str:
    """The file (or PNG bytes) as a ``data:image/png;base64,...`` URL."""
    data = path if isinstance(path, bytes) else Path(path).read_bytes()
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


class _Failure(Exception):
    """A request that failed for good: ``kind`` is the answer's error kind."""

    def __init__(self, kind: str, message: str, attempts: int, calls: int) -> None:
        super().__init__(message)
        self.kind, self.attempts, self.calls = kind, attempts, calls


@ANSWERERS.register("llm")
class LLMAnswerer:
    """An OpenAI-compatible chat model asked for JSON; bounded, concurrent, cached, resumable."""

    name = "llm"

    def __init__(self, base_url: str | None = None, model: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 temperature: float = 0.0, max_tokens: int = 512, seed: int | None = 0, timeout_s: float = 60.0,
                 max_attempts: int = 4, backoff_s: float = 1.0, max_backoff_s: float = 30.0,
                 deadline_s: float = 300.0, max_retry_after_s: float = 60.0, breaker_after: int = 5,
                 concurrency: int = 1, requests_per_minute: float | None = None,
                 max_reply_bytes: int = 1_000_000, input: str = "text", response_format: str = "json_schema",
                 explanation_chars: int = 200, price_per_1k_prompt: float | None = None,
                 price_per_1k_completion: float | None = None, cache_path: str | Path | None = "llm.sqlite",
                 extra_params: dict[str, Any] | None = None, image_dir: str | Path | None = None,
                 image_fit: str = "tiles", image_long_side: int = image_input.LONG_SIDE,
                 image_max_pixels: int = image_input.MAX_PIXELS, image_max_aspect: float = image_input.MAX_ASPECT,
                 image_min_label_px: float = image_input.MIN_LABEL_PX, image_max_tiles: int = image_input.MAX_TILES,
                 api_key: Any = None, sleep: Callable[[float], None] = time.sleep, **unknown: Any) -> None:
        if api_key is not None or any(SECRET_OPTION.search(k) for k in unknown):
            raise DiagQAError("llm: an API key must not be written into the run options (it would be stored in "
                              "run.json); put it in an environment variable and name that variable with api_key_env")
        if unknown:
            raise DiagQAError(f"llm: unknown option(s) {', '.join(sorted(unknown))}")
        if input not in INPUTS:
            raise DiagQAError(f"llm: input must be one of {', '.join(INPUTS)}, not {input!r}")
        if image_fit not in IMAGE_FITS:
            raise DiagQAError(f"llm: image_fit must be one of {', '.join(IMAGE_FITS)}, not {image_fit!r}")
        if response_format not in RESPONSE_FORMATS:
            raise DiagQAError(f"llm: response_format must be one of {', '.join(RESPONSE_FORMATS)}, not {response_format!r}")
        base_url = base_url or os.environ.get("DIAGQA_LLM_BASE_URL")
        model = model or os.environ.get("DIAGQA_LLM_MODEL")
        if not model:
            raise StageUnavailable("no model configured (set options llm.model and llm.base_url, "
                                   "or DIAGQA_LLM_MODEL and DIAGQA_LLM_BASE_URL)")
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - the llm extra is part of the install
            raise StageUnavailable("the 'openai' package is not installed (pip install diagqa[llm])") from exc
        from benchmark.answerers.llm_http import httpx

        self._openai = openai
        self.model, self.base_url, self.input = model, base_url, input
        self.params: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens}
        if seed is not None:
            self.params["seed"] = seed
        self.params.update(extra_params or {})  # e.g. {"max_completion_tokens": 512} for endpoints that want it
        self.params = {k: v for k, v in self.params.items() if v is not None}
        self.max_attempts, self.backoff_s, self.max_backoff_s = max(1, int(max_attempts)), backoff_s, max_backoff_s
        self.timeout_s, self.deadline_s, self.max_retry_after_s = float(timeout_s), float(deadline_s), float(max_retry_after_s)
        self.response_format, self.explanation_chars = response_format, int(explanation_chars)
        self._format_ok = response_format != "none"
        self.concurrency = max(1, int(concurrency))
        self.prices = (price_per_1k_prompt, price_per_1k_completion)
        self.image_dir = Path(image_dir) if image_dir else None
        self.image_fit = image_fit
        self.image_settings = {"long_side": int(image_long_side), "max_pixels": int(image_max_pixels),
                               "max_aspect": float(image_max_aspect), "min_label_px": float(image_min_label_px),
                               "max_tiles": int(image_max_tiles)}
        self._secret = os.environ.get(api_key_env) or ""
        self._http = httpx.Client(transport=GuardedTransport(max_reply_bytes), timeout=timeout_s)
        self._client = openai.OpenAI(base_url=base_url, api_key=self._secret or "not-needed",
                                     timeout=timeout_s, max_retries=0, http_client=self._http)
        self.cache = ReplyCache(cache_file(cache_path)) if cache_path else None
        self.breaker = CircuitBreaker(breaker_after)
        self.pace = Pace(requests_per_minute, sleep=sleep)
        self._sleep = sleep
        self._images: dict[str, tuple[list[str], tuple[int, int]]] = {}
        self._lock = threading.Lock()
        self.config = {"base_url": base_url, "model": model, "api_key_env": api_key_env,
                       "api_key_set": bool(self._secret), "params": dict(self.params), "input": input,
                       "response_format": response_format, "explanation_chars": self.explanation_chars,
                       "timeout_s": timeout_s, "deadline_s": deadline_s, "max_attempts": self.max_attempts,
                       "backoff_s": backoff_s, "max_backoff_s": max_backoff_s, "max_retry_after_s": max_retry_after_s,
                       "breaker_after": breaker_after, "concurrency": self.concurrency,
                       "requests_per_minute": requests_per_minute, "max_reply_bytes": max_reply_bytes,
                       "price_per_1k_prompt": price_per_1k_prompt, "price_per_1k_completion": price_per_1k_completion,
                       "cache_path": str(self.cache.path) if self.cache is not None else None,
                       "image_fit": image_fit, "image_settings": dict(self.image_settings)}

    # -- secrets and images ----------------------------------------------------------------------

    def _scrub(self, text: str) -> str:
        return text.replace(self._secret, "***") if self._secret and text else text

    def _image_url(self, context: Any, image: Path | str | None) -> tuple[list[str], tuple[int, int]] | None:
        """The data URLs of the image parts for this diagram (one per tile) and the tiles' grid."""
        if self.input == "text":
            return None
        if image is None:
            did = getattr(context, "diagram_id", None)
            if did is None:
                return None
            from benchmark.dataset import DEFAULT_ROOT

            image = (self.image_dir or DEFAULT_ROOT / "diagrams") / f"{did}.png"
        key = str(image)
        with self._lock:
            if key not in self._images:
                if self.image_fit == "none":
                    self._images[key] = ([png_data_url(image)], (1, 1))
                else:
                    d2_path = Path(image).with_suffix(".d2")
                    plan = image_input.plan_for(image, d2_path if d2_path.exists() else None, **self.image_settings)
                    self._images[key] = ([png_data_url(t) for t in image_input.tile_pngs(image, plan)], plan.grid)
            return self._images[key]

    # -- one request -------------------------------------------------------------------------------

    def _request(self, messages: list[dict[str, Any]], schema: dict[str, Any], until: float) -> tuple[Any, bool]:
        """One HTTP call; (response, whether the structured-output field was sent)."""
        fmt = response_format_field(self.response_format, schema) if self._format_ok else None
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
            return "http_error", exc.status_code >= 500 or exc.status_code == 408
        return "http_error", False

    def _call(self, messages: list[dict[str, Any]], schema: dict[str, Any]) -> tuple[str, dict[str, Any], int]:
        """(reply content, usage, attempts); raises :class:`_Failure` when no reply came in time."""
        until = time.monotonic() + self.deadline_s
        calls = 0
        attempt = 0
        while True:
            attempt += 1
            sent_format = self._format_ok
            try:
                calls += 1
                resp, _ = self._request(messages, schema, until)
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

    # -- answers -----------------------------------------------------------------------------------

    def _usage(self, usage: dict[str, Any], calls: int, cache_hit: bool, latency: float) -> dict[str, Any]:
        out = {"prompt_tokens": int(usage.get("prompt_tokens") or 0),
               "completion_tokens": int(usage.get("completion_tokens") or 0),
               "calls": calls, "cache_hit": cache_hit, "latency_s": round(latency, 6)}
        p_in, p_out = self.prices
        if p_in is not None or p_out is not None:
            out["cost"] = 0.0 if cache_hit else round(out["prompt_tokens"] / 1000 * (p_in or 0.0)
                                                      + out["completion_tokens"] / 1000 * (p_out or 0.0), 8)
        return out

    def answer(self, question: Question, context: Any, image: Path | str | None = None) -> Answer:
        """The model's answer to ``question`` given ``context`` (and the diagram ``image`` for image input)."""
        start = time.perf_counter()
        meta: dict[str, Any] = {"model": self.model, "cached": False, "input": self.input}
        calls = 0
        try:
            images = self._image_url(context, image)
            urls, grid = images if images is not None else (None, (1, 1))
            if urls is not None:
                meta["image_tiles"] = len(urls)
            messages = build_messages(question, context.text if context is not None else "", self.input, urls,
                                      self.explanation_chars, grid)
            schema = answer_schema(question.kind, self.explanation_chars)
            fmt = self.response_format if self._format_ok else "none"
            key = request_key(self.model, messages, dict(self.params, response_format=fmt))
            meta["request_key"] = key
            hit = self.cache.get(key) if self.cache is not None else None
            if hit is not None:
                try:
                    raw, evidence, explanation = parse_reply(hit["content"])
                except ValueError:  # written by an older version that cached failures: ask again
                    self.cache.delete(key)
                    hit = None
            if hit is not None:
                usage = hit["usage"]
                meta.update(cached=True, attempts=0, tokens=usage, latency_s=round(time.perf_counter() - start, 6))
                return Answer(self.name, raw, evidence=evidence, explanation=explanation, meta=meta,
                              usage=self._usage(usage, 0, True, time.perf_counter() - start))
            if self.breaker.is_open:
                meta["latency_s"] = round(time.perf_counter() - start, 6)
                return Answer(self.name, None, meta=meta, error_kind="not_attempted",
                              error=f"not attempted: {self.breaker.after} requests in a row failed, so no more "
                                    "are made in this run (a re-run asks again)",
                              usage=self._usage({}, 0, False, time.perf_counter() - start))
            try:
                content, usage, attempts = self._call(messages, schema)
            except _Failure as f:
                self.breaker.failed()
                calls = f.calls
                raise
            self.breaker.succeeded()
            calls = usage.pop("calls")
            content = self._scrub(content)
            meta.update(attempts=attempts, tokens=usage, latency_s=round(time.perf_counter() - start, 6),
                        structured=self._format_ok)
            use = self._usage(usage, calls, False, time.perf_counter() - start)
            try:
                raw, evidence, explanation = parse_reply(content)
            except ValueError as exc:
                meta["reply"] = content[:500]
                cut = " (the reply was cut off at max_tokens)" if usage.get("finish_reason") == "length" else ""
                return Answer(self.name, None, error=f"unparsable reply{cut}: {exc}"[:500], meta=meta,
                              error_kind="unparsable", usage=use)
            if self.cache is not None:
                self.cache.put(key, self.model, content, usage, use["latency_s"])
            return Answer(self.name, raw, evidence=evidence, explanation=explanation, meta=meta, usage=use)
        except Exception as exc:  # noqa: BLE001 - one bad sample never loses a run
            latency = time.perf_counter() - start
            meta["latency_s"] = round(latency, 6)
            kind = getattr(exc, "kind", None) or "error"
            meta["attempts"] = getattr(exc, "attempts", meta.get("attempts"))
            message = str(exc) if isinstance(exc, _Failure) else f"{type(exc).__name__}: {exc}"
            return Answer(self.name, None, error=self._scrub(message)[:500], meta=meta, error_kind=kind,
                          usage=self._usage({}, calls, False, latency))

    def answer_many(self, items: Sequence[tuple[Question, Any, Path | str | None]]) -> list[Answer]:
        """Answers to many ``(question, context, image)`` at once, ``concurrency`` requests in flight.

        Requests go out grouped by context (identical system messages one after another), so a
        server that reuses a prompt's prefix reads each context once; answers come back in the
        order of ``items``.
        """
        order = sorted(range(len(items)), key=lambda i: (getattr(items[i][1], "text", "") or "", i))
        out: list[Answer | None] = [None] * len(items)
        if self.concurrency == 1 or len(items) <= 1:
            for i in order:
                out[i] = self.answer(*items[i])
        else:
            with ThreadPoolExecutor(max_workers=min(self.concurrency, len(items))) as pool:
                for i, a in zip(order, pool.map(lambda i: self.answer(*items[i]), order)):
                    out[i] = a
        return [a for a in out if a is not None]


def formatted_rejected(exc: Exception) -> bool:
    """Whether an HTTP 400 complains about the structured-output field (``response_format``)."""
    text = str(getattr(exc, "body", "") or "") + str(exc)
    return "response_format" in text or "json_schema" in text
