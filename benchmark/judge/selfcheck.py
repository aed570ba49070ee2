"""Self-check: the same question asked again k times, with sampling on, and how often the answer holds.

For every sample of a sampling answerer (an OpenAI-compatible endpoint such as ``llm``) whose
answer did not fail, the question is asked again ``k`` times with the same context, the answerer's
own options, ``temperature`` > 0 and one seed per repeat (``seed + 1`` ... ``seed + k``, sent as the
request's ``seed``; a server that ignores seeds still samples, the run is then not repeatable).
Each repeat is scored as the run's answers are (:func:`benchmark.metrics.sample.score_answer`) and
reduced to its normalised value (:func:`value_key`: an abstention is its own value, an answer that
does not normalise is compared as given, a failed repeat has none).

Per sample (a line of ``selfcheck.jsonl``):

* **agreement** = share of the *measured* repeats (those that did not fail) whose value equals the
  recorded answer's; unmeasured (None) with no measured repeat;
* **consistent**: every measured repeat equals the recorded answer; unmeasured (None) when fewer than
  two repeats were measured;
* **unstable right answer**: the recorded answer is right and it is not consistent -- the model does
  not reproduce its own right answer. This is *guess evidence*: a reader that derived the answer from
  the context gives it again; a guesser need not. It is counted whatever the structural guess class
  says (a grounded answer that is unstable is a guess the structural check cannot see).

Per answerer (and per answerer × variant): samples, checked (consistency measured), consistency
(share consistent), mean agreement, right answers checked, unstable right answers and their share,
how many of them the structural check called grounded or lucky, repeat accuracy (share of measured
repeats that are right) and failed repeats.

>>> consistency("yes", ["yes", "no", None, "yes"])
{'measured': 3, 'failed': 1, 'agreement': 0.6667, 'consistent': False}
>>> consistency("yes", ["yes", None, None])["consistent"] is None
True
"""
from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from benchmark.errors import DiagQAError

#: the value of an abstention among the repeats' values
ABSTAINED = "<abstained>"


@dataclass(frozen=True)
class SelfCheckConfig:
    """``k`` repeats at ``temperature`` (> 0), seeds ``seed + 1 .. seed + k``, for ``answerers``."""

    k: int = 5
    temperature: float = 0.7
    seed: int = 0
    answerers: tuple[str, ...] = ("llm",)

    @classmethod
    def from_mapping(cls, raw: dict[str, Any], where: str = "selfcheck", seed: int = 0) -> "SelfCheckConfig":
        """The configuration of a ``selfcheck:`` mapping; a bad key or value is an error naming it.

        >>> SelfCheckConfig.from_mapping({"k": 3, "temperature": 0.9}).seeds()
        [1, 2, 3]
        >>> SelfCheckConfig.from_mapping({"k": 1})
        Traceback (most recent call last):
        ...
        benchmark.errors.DiagQAError: selfcheck.k must be a whole number of at least 2, got 1
        """
        known = {"k", "temperature", "seed", "answerers"}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise DiagQAError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        k = raw.get("k", cls.k)
        if isinstance(k, bool) or not isinstance(k, int) or k < 2:
            raise DiagQAError(f"{where}.k must be a whole number of at least 2, got {k!r}")
        t = raw.get("temperature", cls.temperature)
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t <= 2:
            raise DiagQAError(f"{where}.temperature must be a number in (0, 2] (sampling on), got {t!r}")
        s = raw.get("seed", seed)
        if isinstance(s, bool) or not isinstance(s, int):
            raise DiagQAError(f"{where}.seed must be an integer, got {s!r}")
        names = raw.get("answerers", list(cls.answerers))
        if not (isinstance(names, list) and names and all(isinstance(n, str) for n in names)):
            raise DiagQAError(f"{where}.answerers must be a list of answerer names, got {names!r}")
        return cls(k, float(t), s, tuple(names))

    def seeds(self) -> list[int]:
        return [self.seed + r for r in range(1, self.k + 1)]


def value_key(metrics: dict[str, Any], raw: Any = None) -> str | None:
    """The comparable value of a scored answer: canonical JSON of its normalised value, :data:`ABSTAINED`
    for an abstention, None for a failed answer; an answer that does not normalise (a label the diagram
    lacks, "yes" to a count) is compared as given, ``raw:`` + the JSON of ``raw``.

    >>> value_key({"answer_value": ["b", "a"], "error": None}), value_key({"abstained": True}), value_key({"error": "timeout"})
    ('["b", "a"]', '<abstained>', None)
    >>> value_key({"answer_value": None}, "Moon")
    'raw:"Moon"'
    """
    if metrics.get("error"):
        return None
    if metrics.get("abstained"):
        return ABSTAINED
    if metrics.get("answer_value") is None:
        return "raw:" + json.dumps(raw, sort_keys=True, ensure_ascii=False)
    return json.dumps(metrics.get("answer_value"), sort_keys=True, ensure_ascii=False)


def consistency(recorded: str | None, repeats: Sequence[str | None]) -> dict[str, Any]:
    """Measured and failed repeats, agreement with the recorded value and consistency (module doc)."""
    measured = [v for v in repeats if v is not None]
    agree = sum(v == recorded for v in measured)
    return {"measured": len(measured), "failed": len(repeats) - len(measured),
            "agreement": round(agree / len(measured), 4) if measured else None,
            "consistent": (agree == len(measured)) if len(measured) >= 2 else None}


def selfcheck_records(records: Sequence[dict[str, Any]], cfg: SelfCheckConfig, make_answerer: Callable[[str], Any],
                      graphs: dict[str, Any]) -> list[dict[str, Any]]:
    """One self-check row per sample of ``cfg.answerers`` whose answer did not fail.

    ``make_answerer(name)`` builds the answerer as the run configured it; its ``params`` get the
    temperature and each repeat's seed. ``graphs`` maps a diagram id to its graph (the run's
    ``graphs.json``), for scoring the repeats.
    """
    from benchmark.answers import Answer
    from benchmark.metrics.sample import score_answer
    from benchmark.records import context_from_json, question_from_json

    rows: list[dict[str, Any]] = []
    for name in cfg.answerers:
        recs = [r for r in records if r.get("answerer") == name and not r.get("error") and r.get("answer") is not None
                and not (r["answer"].get("error")) and r.get("metrics")]
        if not recs:
            continue
        answerer = make_answerer(name)
        if not (hasattr(answerer, "answer_many") and isinstance(getattr(answerer, "params", None), dict)):
            raise DiagQAError(f"selfcheck: answerer {name!r} is not an OpenAI-compatible endpoint that samples")
        items = [(question_from_json(r["question"]), context_from_json(r["context"]) if r.get("context") else None, None)
                 for r in recs]
        per_repeat: list[list[Any]] = []
        for seed in cfg.seeds():
            answerer.params.update(temperature=cfg.temperature, seed=seed)
            per_repeat.append(answerer.answer_many(items))
        for i, rec in enumerate(recs):
            q, g = items[i][0], graphs.get(rec.get("diagram_id"))
            repeats = []
            for seed, answers in zip(cfg.seeds(), per_repeat):
                a: Answer = answers[i]
                if g is None:
                    repeats.append({"seed": seed, "value": None, "correct": None, "error_kind": "no_graph"})
                    continue
                m, _ = score_answer(q, g, a, getattr(a, "error_kind", None))
                repeats.append({"seed": seed, "value": value_key(m, a.raw), "correct": m.get("correct"),
                                "error_kind": a.error_kind if a.error else None,
                                "cache_hit": bool((a.usage or {}).get("cache_hit"))})
            recorded = value_key(rec["metrics"], rec["answer"].get("raw"))
            c = consistency(recorded, [r["value"] for r in repeats])
            correct = rec["metrics"].get("correct")
            rows.append({"sample_id": rec.get("sample_id"), "answerer": name, "variant": rec.get("variant"),
                         "question_id": rec.get("question_id"), "k": cfg.k, "temperature": cfg.temperature,
                         "recorded": recorded, "correct": correct, "guess_class": rec["metrics"].get("guess_class"),
                         "repeats": repeats, **c,
                         "unstable_right": (correct is True and c["consistent"] is False)
                         if c["consistent"] is not None else None})
    return rows


def _mean(xs: list[float]) -> float | None:
    return round(sum(xs) / len(xs), 4) if xs else None


def summarise_selfcheck(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per answerer and per answerer × variant: the numbers of the module doc.

    >>> rows = [{"answerer": "llm", "variant": "v", "consistent": True, "agreement": 1.0, "correct": True,
    ...          "unstable_right": False, "guess_class": "grounded", "failed": 0,
    ...          "repeats": [{"correct": True}, {"correct": True}]},
    ...         {"answerer": "llm", "variant": "v", "consistent": False, "agreement": 0.5, "correct": True,
    ...          "unstable_right": True, "guess_class": "lucky_guess", "failed": 0,
    ...          "repeats": [{"correct": True}, {"correct": False}]}]
    >>> s = summarise_selfcheck(rows)["answerers"]["llm"]
    >>> s["consistency"], s["agreement"], s["unstable_right"], s["unstable_right_share"], s["repeat_accuracy"]
    (0.5, 0.75, 1, 0.5, 0.75)
    """
    def block(rs: list[dict[str, Any]]) -> dict[str, Any]:
        checked = [r for r in rs if r.get("consistent") is not None]
        right = [r for r in checked if r.get("correct") is True]
        unstable = [r for r in right if r.get("unstable_right")]
        outcomes = [rep["correct"] for r in rs for rep in r.get("repeats") or () if rep.get("correct") is not None]
        return {"samples": len(rs), "checked": len(checked),
                "consistency": _mean([float(bool(r["consistent"])) for r in checked]),
                "agreement": _mean([r["agreement"] for r in rs if r.get("agreement") is not None]),
                "right_checked": len(right), "unstable_right": len(unstable),
                "unstable_right_share": round(len(unstable) / len(right), 4) if right else None,
                "unstable_grounded": sum(r.get("guess_class") == "grounded" for r in unstable),
                "unstable_lucky": sum(r.get("guess_class") == "lucky_guess" for r in unstable),
                "repeat_accuracy": _mean([float(bool(x)) for x in outcomes]),
                "failed_repeats": sum(int(r.get("failed") or 0) for r in rs)}

    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_variant: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by[str(r.get("answerer"))].append(r)
        by_variant[(str(r.get("answerer")), str(r.get("variant")))].append(r)
    return {"answerers": {a: block(rs) for a, rs in sorted(by.items())},
            "variants": [dict(answerer=a, variant=v, **block(rs)) for (a, v), rs in sorted(by_variant.items())]}
