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

* ``context_window``: the model's context window in tokens (llama.cpp's ``n_ctx``; None = unknown).
  A prompt that cannot fit -- its estimated tokens (:func:`prompt_tokens`) plus ``max_tokens`` above
  the window -- is not sent: it is answered with ``error_kind`` ``context_too_long``, an error, never
  a wrong answer. A server that refuses a prompt as longer than its context (HTTP 400 naming the
  context) gives the same kind; neither counts towards ``breaker_after``.

Every failure ends up in :attr:`Answer.error` with a one-word :attr:`Answer.error_kind` --
nothing is raised out of :meth:`LLMAnswerer.answer` -- and only replies that parsed are cached.
"""
from __future__ import annotations

import base64
import json
import re
import time
from pathlib import Path
from typing import Any, Sequence

from benchmark import image_input
from benchmark.answerers.chat import (CONTEXT_TOO_LONG, RESPONSE_FORMATS, TRANSPORT_KINDS, ChatEndpoint,  # noqa: F401
                                      formatted_rejected, prompt_tokens, response_format_field)
from benchmark.answers import Answer, evidence_pairs
from benchmark.errors import DiagQAError
from benchmark.questions import Question
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
- evidence: the arrows your answer rests on, each as [source label, target label]{explanation_rule}
- answer "cannot tell" when the diagram does not determine the answer (for example, when it does not show \
what the question names)"""
EXPLANATION_FIELD = ', "explanation": "<a few words>"'
EXPLANATION_RULE = '\n- explanation: at most {chars} characters, the relations you used, like "A -> B -> C"'

TEXT_SOURCE = """, using only the context below.
The context lists the diagram's arrows, one per line, as "Source -> Target [label]" ("--" and "<->" \
join nodes both ways), then nodes that have no arrow in the context, one per line, then "Node is inside \
Container" for nodes drawn inside a container"""
#: said only when the context marks an edge's kind (benchmark.context.edge_line), so that other prompts stay as they were
KIND_NOTE = ("An arrow marked (data) is a data feed, read or query and one marked (association) a line that relates "
             "two nodes: the flow does not pass along either. Arrows marked (parallel) leave a fork whose branches all run.")
_KIND_MARK = re.compile(r" \((?:data|association|parallel)\)$", re.M)
IMAGE_SOURCE = ", shown in the attached image"
IMAGE_TEXT_SOURCE = """, shown in the attached image and described in the context below.
The context lists the diagram's arrows, one per line, as "Source -> Target [label]" ("--" and "<->" \
join nodes both ways), then nodes that have no arrow in the context, one per line, then "Node is inside \
Container" for nodes drawn inside a container"""

INPUTS = ("text", "image", "image+text")
#: the answer that abstains (offered in every prompt, so that its offer tells nothing about a question)
CANNOT_TELL = "cannot tell"
#: how the PNG is fitted to the model's input: legible tiles, or the file as it is
IMAGE_FITS = ("tiles", "none")
TILES_NOTE = ("The diagram is shown in {n} overlapping tiles, {rows} row(s) by {cols} column(s), "
              "in reading order (left to right, then top to bottom).")


def answer_schema(kind: str, explanation_chars: int = 200, max_evidence: int = 8) -> dict[str, Any]:
    """The JSON schema of a reply to a question of ``kind`` (what grammar-constrained decoding follows);
    ``explanation_chars=0`` asks for no explanation.

    >>> answer_schema("bool")["properties"]["answer"]
    {'type': 'string', 'enum': ['yes', 'no', 'cannot tell']}
    >>> answer_schema("int")["properties"]["answer"]["anyOf"][1]
    {'type': 'string', 'enum': ['cannot tell']}
    >>> answer_schema("int")["required"], answer_schema("int", 0)["required"]
    (['answer', 'evidence', 'explanation'], ['answer', 'evidence'])
    """
    abstain = {"type": "string", "enum": [CANNOT_TELL]}
    answer = {
        "bool": {"type": "string", "enum": ["yes", "no", CANNOT_TELL]},
        "int": {"anyOf": [{"type": "integer"}, abstain]},
        "nodes": {"anyOf": [{"type": "array", "items": {"type": "string"}}, abstain]},
        "path": {"anyOf": [{"type": "array", "items": {"type": "string"}}, abstain]},
    }.get(kind, {"type": "string"})
    pair = {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2}
    props: dict[str, Any] = {"answer": answer, "evidence": {"type": "array", "items": pair, "maxItems": max_evidence}}
    if explanation_chars > 0:
        props["explanation"] = {"type": "string", "maxLength": explanation_chars}
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


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
        if _KIND_MARK.search(context_text or ""):
            system += "\n" + KIND_NOTE
        system += "\n\nContext:\n" + (context_text or "(empty: nothing was retrieved)")
    user_text = f"{question.text}\nanswer: {FORMATS[question.surface_kind]}"  # an absent-entity question reads as its form
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


@ANSWERERS.register("llm")
class LLMAnswerer(ChatEndpoint):
    """An OpenAI-compatible chat model asked for JSON; bounded, concurrent, cached, resumable."""

    name = "llm"
    stage = "llm"

    def __init__(self, input: str = "text", explanation_chars: int = 200, image_dir: str | Path | None = None,
                 image_fit: str = "tiles", image_long_side: int = image_input.LONG_SIDE,
                 image_max_pixels: int = image_input.MAX_PIXELS, image_max_aspect: float = image_input.MAX_ASPECT,
                 image_min_label_px: float = image_input.MIN_LABEL_PX, image_max_tiles: int = image_input.MAX_TILES,
                 **options: Any) -> None:
        if input not in INPUTS:
            raise DiagQAError(f"llm: input must be one of {', '.join(INPUTS)}, not {input!r}")
        if image_fit not in IMAGE_FITS:
            raise DiagQAError(f"llm: image_fit must be one of {', '.join(IMAGE_FITS)}, not {image_fit!r}")
        super().__init__(**options)
        self.input, self.explanation_chars = input, int(explanation_chars)
        self.image_dir = Path(image_dir) if image_dir else None
        self.image_fit = image_fit
        self.image_settings = {"long_side": int(image_long_side), "max_pixels": int(image_max_pixels),
                               "max_aspect": float(image_max_aspect), "min_label_px": float(image_min_label_px),
                               "max_tiles": int(image_max_tiles)}
        self._images: dict[str, tuple[list[str], tuple[int, int]]] = {}
        self.config.update(input=input, explanation_chars=self.explanation_chars, image_fit=image_fit,
                           image_settings=dict(self.image_settings))

    # -- images ------------------------------------------------------------------------------------

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

    # -- answers -----------------------------------------------------------------------------------

    def answer(self, question: Question, context: Any, image: Path | str | None = None) -> Answer:
        """The model's answer to ``question`` given ``context`` (and the diagram ``image`` for image input)."""
        start = time.perf_counter()
        meta: dict[str, Any] = {"model": self.model, "cached": False, "input": self.input}
        try:
            images = self._image_url(context, image)
            urls, grid = images if images is not None else (None, (1, 1))
            if urls is not None:
                meta["image_tiles"] = len(urls)
            messages = build_messages(question, context.text if context is not None else "", self.input, urls,
                                      self.explanation_chars, grid)
            reply = self.ask(messages, answer_schema(question.surface_kind, self.explanation_chars), parse_reply,
                             start=start)
        except Exception as exc:  # noqa: BLE001 - one bad sample never loses a run
            latency = time.perf_counter() - start
            meta["latency_s"] = round(latency, 6)
            return Answer(self.name, None, error=self._scrub(f"{type(exc).__name__}: {exc}")[:500], meta=meta,
                          error_kind="error", usage=self._usage({}, 0, False, latency))
        meta.update(reply.meta)
        if not reply.ok:
            return Answer(self.name, None, error=reply.error, meta=meta, error_kind=reply.error_kind, usage=reply.usage)
        raw, evidence, explanation = reply.value
        return Answer(self.name, raw, evidence=evidence, explanation=explanation, meta=meta, usage=reply.usage)

    def answer_many(self, items: Sequence[tuple[Question, Any, Path | str | None]]) -> list[Answer]:
        """Answers to many ``(question, context, image)`` at once, ``concurrency`` requests in flight.

        Requests go out grouped by context (identical system messages one after another), so a
        server that reuses a prompt's prefix reads each context once; answers come back in the
        order of ``items``.
        """
        order = sorted(range(len(items)), key=lambda i: (getattr(items[i][1], "text", "") or "", i))
        return self.map(lambda item: self.answer(*item), items, order)
